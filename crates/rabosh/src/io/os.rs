//! The engine's calls into the OS that the standard library does not make: who holds a lock
//! (this machine's host name, when a process started), handing freed heap pages back, and mapping a
//! hint file read-only ([`Mapped`]).
//!
//! A few calls per OS instead of a process-listing crate: `sysinfo` (used before) links IOKit,
//! CoreFoundation and `SystemConfiguration` on macOS, which need Apple's SDK to link, so the macOS
//! addons could not be built anywhere but on a Mac. What is needed here is in libSystem
//! (`proc_pidinfo`), in `/proc` on Linux and in kernel32 on Windows.
//!
//! The one module of the engine with `unsafe` (FFI calls with their buffers).
#![allow(unsafe_code)]

/// Open's transient data (hint files, every segment's records while the key directory is built
/// from them, a scan's summary) is freed by then, but glibc keeps the freed pages of its heaps
/// resident until asked, and they sit between the key directory's allocations, where its
/// automatic trim (top of the heap only) never reaches: hand them back, so a process that opens
/// a store stays resident only for what the store keeps.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn release_freed_memory() {
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    crate::probe::count_heap_trim();
    // SAFETY: glibc's malloc_trim takes no pointer; it only returns wholly free pages of its
    // own heaps to the kernel, and is safe to call from any thread at any time.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn release_freed_memory() {}

/// A zeroed buffer of `len` bytes for a read to fill, its pages put in place by one call
/// (Linux 5.14+: `MADV_POPULATE_WRITE`) rather than one page fault per 4 KiB while the kernel
/// copies into it: for the few MB of hint files a fresh process reads at open, those faults
/// cost more than the copy (issue 24: 5.25 MB read in a fresh process, 2.0–7.2 ms into a
/// plain buffer, 1.5–2.0 ms into a populated one). Elsewhere, on an older kernel (the call
/// fails and is ignored) and for small buffers, an ordinary zeroed buffer: the bytes are the
/// same either way.
pub(crate) fn zeroed_for_read(len: usize) -> Vec<u8> {
    let buf = vec![0u8; len];
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if len >= 256 << 10 {
        // SAFETY: sysconf takes no pointer.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096)).unwrap_or(4096);
        let at = buf.as_ptr() as usize;
        let (start, end) = (at.next_multiple_of(page), (at + len) / page * page);
        if end > start {
            // SAFETY: [start, end) lies inside `buf`'s allocation, which this function owns and
            // nothing else references; populating its pages changes none of its bytes (they
            // stay zero) and unmaps nothing.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_POPULATE_WRITE);
            }
        }
    }
    buf
}

/// The kernel fills a 256-byte `struct statx` whatever it was asked for: the buffer must hold it.
#[cfg(all(target_os = "linux", any(target_env = "gnu", target_env = "musl")))]
const _: () = assert!(std::mem::size_of::<libc::statx>() >= 256);

/// One field of an open file's status (`STATX_SIZE`, `STATX_NLINK`), asked of Linux's `statx`
/// without its timestamps: None when the kernel cannot say (no statx: Linux before 4.11, a
/// seccomp filter; the field not filled), and the caller asks the standard library instead.
///
/// Why not `File::metadata`: since Linux 6.13 (multigrain timestamps: ext4, xfs, btrfs, tmpfs)
/// a stat that reports ctime or mtime marks the inode's ctime as seen, so the next write
/// stamps a fine-grained new time and dirties the inode, and on ext4 without a journal the
/// next `fdatasync` then writes the inode's table block as well as the data (issue 24: the
/// engine's link-count check after every commit's fsync made every next commit's fdatasync
/// 8 KiB of data plus a 4 KiB metadata write, 1.3–1.7× an overwrite's; docs/investigations/durable-commands.md).
#[cfg(all(target_os = "linux", any(target_env = "gnu", target_env = "musl")))]
pub(crate) fn statx_field(file: &std::fs::File, mask: u32) -> Option<libc::statx> {
    use std::os::fd::AsRawFd;
    let mut out = std::mem::MaybeUninit::<libc::statx>::zeroed();
    // The raw syscall, not libc's wrapper: musl before 1.2.5 has no `statx` symbol to link.
    // SAFETY: the fd is open for as long as `file` is borrowed; the path is a NUL-terminated
    // empty string, which AT_EMPTY_PATH makes mean that fd; `out` is a writable statx buffer
    // the kernel fills (zeroed first, so any byte it leaves is a valid integer).
    let r = unsafe {
        libc::syscall(
            libc::SYS_statx,
            libc::c_long::from(file.as_raw_fd()),
            c"".as_ptr(),
            libc::c_long::from(libc::AT_EMPTY_PATH),
            libc::c_long::from(mask),
            out.as_mut_ptr(),
        )
    };
    if r != 0 {
        return None;
    }
    // SAFETY: zero-initialised, then filled by a statx that succeeded; plain integers only.
    let st = unsafe { out.assume_init() };
    (st.stx_mask & mask == mask).then_some(st)
}

/// The machine's host name, or empty when the OS will not say.
pub fn host_name() -> String {
    imp::host_name().unwrap_or_default()
}

/// When process `pid` started, in milliseconds since the Unix epoch; `None` when it does not run
/// (exited, a zombie, or not visible to this process).
pub fn process_start_ms(pid: u32) -> Option<u64> {
    imp::process_start_ms(pid)
}

#[cfg(unix)]
mod imp {
    pub fn host_name() -> Option<String> {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is writable for its whole length; gethostname writes at most that.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc != 0 {
            return None;
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Some(String::from_utf8_lossy(&buf[..end]).into_owned())
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn process_start_ms(pid: u32) -> Option<u64> {
        // Field 22 of /proc/<pid>/stat is the start in clock ticks after boot; /proc/stat's
        // `btime` is the boot in seconds since the epoch. The command name (field 2) may hold
        // spaces and parentheses, so fields are counted after its last ')'.
        // `/proc/./<pid>` is `/proc/<pid>` to the kernel. qemu-user rewrites a process's reads of
        // `/proc/self/stat` and `/proc/<its own pid>/stat` with a start time of its own, seconds
        // after the kernel's (when the emulated program began), while other processes read the
        // kernel's: a holder record written from the rewritten one would make a live holder look
        // gone. This spelling is not rewritten, so every process records and judges the same number.
        let stat = std::fs::read_to_string(format!("/proc/./{pid}/stat")).ok()?;
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_ascii_whitespace();
        let state = fields.next()?;
        if state == "Z" || state == "X" {
            return None;
        }
        // `rest` starts at field 3 (state); field 22 is 19 further on.
        let ticks: u64 = fields.nth(18)?.parse().ok()?;
        let boot = std::fs::read_to_string("/proc/stat").ok()?;
        let btime: u64 = boot.lines().find_map(|l| l.strip_prefix("btime "))?.trim().parse().ok()?;
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let hz = u64::try_from(hz).ok().filter(|h| *h > 0)?;
        Some(btime * 1000 + ticks * 1000 / hz)
    }

    #[cfg(any(target_os = "macos", target_os = "ios"))]
    pub fn process_start_ms(pid: u32) -> Option<u64> {
        let mut info = std::mem::MaybeUninit::<libc::proc_bsdinfo>::zeroed();
        let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
        // SAFETY: the buffer is a proc_bsdinfo of the size passed; proc_pidinfo fills at most it.
        let n = unsafe {
            libc::proc_pidinfo(pid as libc::c_int, libc::PROC_PIDTBSDINFO, 0, info.as_mut_ptr().cast(), size)
        };
        if n != size {
            return None;
        }
        // SAFETY: proc_pidinfo wrote the whole struct (n == size).
        let info = unsafe { info.assume_init() };
        // SZOMB: exited, not yet reaped.
        if info.pbi_status == 5 {
            return None;
        }
        Some(info.pbi_start_tvsec * 1000 + info.pbi_start_tvusec / 1000)
    }

    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos", target_os = "ios")))]
    pub fn process_start_ms(_pid: u32) -> Option<u64> {
        None
    }
}

#[cfg(windows)]
mod imp {
    use windows_sys::Win32::Foundation::{CloseHandle, FILETIME, STILL_ACTIVE};
    use windows_sys::Win32::System::SystemInformation::{ComputerNameDnsHostname, GetComputerNameExW};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, GetProcessTimes, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };

    pub fn host_name() -> Option<String> {
        let mut buf = [0u16; 256];
        let mut len = buf.len() as u32;
        // SAFETY: `len` is the buffer's length in u16s; the call writes at most that many.
        let ok = unsafe { GetComputerNameExW(ComputerNameDnsHostname, buf.as_mut_ptr(), &raw mut len) };
        if ok == 0 {
            return None;
        }
        Some(String::from_utf16_lossy(&buf[..len as usize]))
    }

    /// 100 ns intervals between 1601-01-01 and 1970-01-01.
    const EPOCH_DIFF: u64 = 116_444_736_000_000_000;

    pub fn process_start_ms(pid: u32) -> Option<u64> {
        // SAFETY: OpenProcess has no memory preconditions; a null handle is checked below.
        let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if h.is_null() {
            return None;
        }
        let zero = FILETIME { dwLowDateTime: 0, dwHighDateTime: 0 };
        let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
        let mut code = 0u32;
        // SAFETY: `h` is the open process handle checked above (closed only below); every out
        // pointer is a live local FILETIME.
        let times_ok = unsafe { GetProcessTimes(h, &raw mut created, &raw mut exited, &raw mut kernel, &raw mut user) };
        // SAFETY: `h` as above; `code` is a live local u32.
        let code_ok = unsafe { GetExitCodeProcess(h, &raw mut code) };
        // SAFETY: `h` was opened above, is closed once here and not used after.
        unsafe { CloseHandle(h) };
        // An exited process whose handle someone still holds can be opened: it does not run.
        if times_ok == 0 || code_ok == 0 || code != STILL_ACTIVE as u32 {
            return None;
        }
        let t = (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime);
        Some(t.checked_sub(EPOCH_DIFF)? / 10_000)
    }
}

/// A file's bytes mapped read-only and private (issue 24): what open keeps of a plain hint file
/// for the key directory to read. A read would copy the 5 MB of a 50,000-key store's hints
/// into fresh heap pages (the kernel's copy and the buffer's page faults: ≈ 1.6 ms of a
/// 3–5 ms open); a map of the page cache costs ≈ 0.15 ms. Unix only (elsewhere `of` is never
/// called: a Windows map would keep a file from being replaced by a rename).
///
/// Safe to read for as long as no one truncates the file in place: the engine never does (a
/// hint is written once, under a temporary name, and renamed into place; a rename over it or
/// an unlink leaves this map on the old inode, intact). A foreign process that cut a mapped hint
/// short or rewrote it in place would crash the reader (SIGBUS past the new end, or a panic on
/// records that no longer parse) instead of having the segment scanned.
pub struct Mapped {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: a read-only private mapping owned by this handle alone: no one writes through it,
// and it is unmapped once (on drop, by whichever thread holds it then), so sending the handle
// to another thread moves the ownership of immutable bytes.
unsafe impl Send for Mapped {}
// SAFETY: `&Mapped` only reads the mapped bytes (`Deref`); nothing mutates or unmaps them
// through a shared reference, so any number of threads may read them at once.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// The first `len` bytes of `file` (open for reading), none of its pages in place yet: a
    /// paged hint is read a directory and a few pages at a time, and putting every page of a
    /// million keys' hints in place (`MAP_POPULATE`) cost open about 1 ms per 16 MB hint, and as
    /// much resident memory for a moment, only to let it go again. A whole hint, checked byte by
    /// byte, asks for its pages at once ([`Mapped::populate`]). None when the system refuses
    /// (then the caller reads instead).
    #[cfg(unix)]
    pub(crate) fn of(file: &std::fs::File, len: usize) -> Option<Mapped> {
        use std::os::fd::AsRawFd;
        if len == 0 {
            return None;
        }
        let flags = libc::MAP_PRIVATE;
        // SAFETY: a fresh mapping chosen by the kernel (no address given), of an fd open for
        // reading for the duration of the call; the mapping outlives the fd by design.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, flags, file.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return None;
        }
        Some(Mapped { ptr: std::ptr::NonNull::new(p.cast())?, len })
    }
}

impl Mapped {
    /// Puts every page of the mapping in place in one call (Linux 5.14+ `MADV_POPULATE_READ`)
    /// rather than a fault per few pages while a check reads every byte; elsewhere, or where
    /// the kernel refuses, nothing (the reads fault them in).
    pub(crate) fn populate(&self) {
        // SAFETY: the range is exactly this live mapping; the advice changes no byte it reads.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        unsafe {
            libc::madvise(self.ptr.as_ptr().cast(), self.len, libc::MADV_POPULATE_READ);
        }
    }

    /// Lets go of the pages this mapping has in place (Linux `MADV_DONTNEED`): they stay in the
    /// page cache and the next read of one maps it again. Open reads every byte of a hint to
    /// check it, which left all of them counted in the process's resident memory (issue 36:
    /// 270 MB of a million-key store's hints, where a read then touches a few pages). A private
    /// read-only map has no page of its own to lose, so its bytes read the same afterwards.
    pub(crate) fn release_pages(&self) {
        // SAFETY: the range is exactly this live mapping; the advice changes no byte it reads.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        unsafe {
            libc::madvise(self.ptr.as_ptr().cast(), self.len, libc::MADV_DONTNEED);
        }
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes until drop (see the type's note on truncation).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `of`, unmapped once; no slice of it outlives `self`.
        #[cfg(unix)]
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

impl std::fmt::Debug for Mapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapped({} bytes)", self.len)
    }
}

/// A file's bytes as kept in memory: read into the heap, or mapped ([`Mapped`]). A hint file is
/// kept so while a version of the key directory stands on the run that holds it.
pub(crate) enum FileBytes {
    Read(Vec<u8>),
    Mapped(Mapped),
}

impl FileBytes {
    /// Mapped bytes' pages out of the resident set ([`Mapped::release_pages`]), as once open
    /// has checked a hint; read bytes stay as they are.
    pub(crate) fn release_pages(&self) {
        if let FileBytes::Mapped(m) = self {
            m.release_pages();
        }
    }
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Read(v) => v,
            FileBytes::Mapped(m) => m,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Populated or not, every size gives exactly `len` zero bytes that a read can fill (sizes
    /// around the threshold and page edges; the allocation's start is not page-aligned).
    #[test]
    fn a_buffer_for_a_read_is_len_zero_bytes() {
        for len in [0, 1, 4095, 4097, (256 << 10) - 1, 256 << 10, (256 << 10) + 1, 3 << 20, (5 << 20) + 12_345] {
            let mut buf = zeroed_for_read(len);
            assert_eq!(buf.len(), len);
            assert!(buf.iter().all(|&b| b == 0), "{len} bytes not all zero");
            buf.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
            assert!(buf.iter().enumerate().all(|(i, &b)| b == i as u8));
        }
    }

    #[test]
    fn this_process_runs_and_started_recently() {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
        let started = process_start_ms(std::process::id()).expect("own start time");
        // Started before now, and not before the test binary could have been built.
        assert!(started <= now + 2000, "started {started} after now {now}");
        assert!(now - started < 24 * 3600 * 1000, "started {started}, now {now}");
    }

    #[test]
    fn an_exited_child_does_not_run() {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--list")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        child.wait().unwrap();
        // Reaped (or on Windows: exited; `child` still holds its handle).
        assert_eq!(process_start_ms(pid), None);
    }

    #[test]
    fn host_name_is_the_os_one() {
        let name = host_name();
        assert!(!name.is_empty());
        assert!(!name.contains('\0'));
    }
}
