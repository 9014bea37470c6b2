//! `close()` releases every file handle even while the Store value lives on (a binding's object
//! may outlive close until a GC): descriptors must not pile up over open/close cycles.

#[cfg(target_os = "linux")]
#[test]
fn closed_stores_kept_alive_hold_no_descriptor() {
    use rabosh::{Batch, Options, Store};
    let fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    let tmp = tempfile::tempdir().unwrap();
    let mut kept = Vec::new();
    let before = fds();
    for i in 0..40u32 {
        let s = Store::open(tmp.path(), Options::default()).unwrap();
        let mut b = Batch::new();
        b.put(format!("k{i}").into_bytes(), b"v".to_vec(), vec![]);
        s.write(b).unwrap();
        s.close().unwrap();
        kept.push(s);
    }
    let after = fds();
    assert!(after <= before + 2, "descriptors grew from {before} to {after} over 40 closed stores");
}
