//! A search over paths on PostgreSQL (`Memories::list_page` with a text): the query leaves out
//! the keys that cannot match, so a search that matches little does not bring the scope over.

mod postgres_util;

use std::sync::Arc;

use postgres_util::{Schema, counted};
use rabosh_memory::{Memories, MemoryOptions};
use rabosh_memory_postgres::PgBackend;

#[test]
fn a_search_reads_the_rows_that_may_match_not_the_scope() {
    let s = Schema::new("search");
    let b = Arc::new(s.open());
    let m = Memories::new(b.clone(), MemoryOptions::default()).unwrap();
    let mut files: Vec<(String, String)> = (0..2_000).map(|i| (format!("/memories/f/{i:04}"), String::new())).collect();
    files.extend([("/memories/f/0500-Hit".into(), "h".into()), ("/memories/f/1500-hit".into(), "h".into())]);
    m.import_all(&files, false).unwrap();

    let (rows, page) = counted(&b, PgBackend::rows_read, || m.list_page(None, 10, "HIT").unwrap());
    let paths: Vec<&str> = page.memories.iter().map(|x| x.path.as_str()).collect();
    assert_eq!((paths, page.more), (vec!["/memories/f/0500-Hit", "/memories/f/1500-hit"], false));
    assert!(rows <= 2, "the search read {rows} rows for 2 matches among 2,002");
    // The counter counts: a listing of as many memories reads them.
    let (all_rows, all) = counted(&b, PgBackend::rows_read, || m.list_page(None, 2_002, "").unwrap());
    assert_eq!(all.memories.len(), 2_002);
    assert!(all_rows >= 2_002, "the listing read {all_rows} rows");
}
