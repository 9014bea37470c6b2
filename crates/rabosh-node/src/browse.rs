//! A scope a page at a time (rabosh-memory's `browse.rs`): a directory's children with their
//! sizes, and an export that streams.

use napi::Env;
use napi::bindgen_prelude::{AsyncTask, Object};
use napi_derive::napi;
use rabosh_memory::{Child, Children, ExportPage};

use crate::bulk::NativeExportedMemory;
use crate::fault::Fault;
use crate::memories::NativeMemories;
use crate::store::NativeSnapshot;
use crate::work::{Work, work};

/// One name directly under a directory: `memory` is the size of the memory at that name, if any;
/// `memories` and `bytes` count what lies below it (hidden memories included).
#[napi(object)]
pub struct NativeChild {
    pub name: String,
    pub memory: Option<f64>,
    pub memories: f64,
    pub bytes: f64,
}

/// A page of a directory's children; `next` is the `after` of the next page.
#[napi(object)]
pub struct NativeChildren {
    pub memories: f64,
    pub bytes: f64,
    pub total: f64,
    pub entries: Vec<NativeChild>,
    pub next: Option<String>,
}

#[napi(object)]
pub struct NativeExportPage {
    pub memories: Vec<NativeExportedMemory>,
    pub next: Option<String>,
}

impl From<Child> for NativeChild {
    fn from(c: Child) -> Self {
        NativeChild {
            name: c.name,
            memory: c.memory.map(|s| s as f64),
            memories: c.memories as f64,
            bytes: c.bytes as f64,
        }
    }
}

impl From<Children> for NativeChildren {
    fn from(c: Children) -> Self {
        NativeChildren {
            memories: c.memories as f64,
            bytes: c.bytes as f64,
            total: c.total as f64,
            entries: c.entries.into_iter().map(NativeChild::from).collect(),
            next: c.next,
        }
    }
}

impl From<ExportPage> for NativeExportPage {
    fn from(p: ExportPage) -> Self {
        NativeExportPage { memories: p.memories.into_iter().map(NativeExportedMemory::from).collect(), next: p.next }
    }
}

/// A page size from JS: a positive safe integer by the facade's check; the cast saturates.
fn page_size(limit: f64) -> usize {
    crate::js_number::to_unsigned(limit) as usize
}

#[napi]
impl NativeMemories {
    /// The names directly under `dir` after `after`, at most `limit`, with their sizes (metadata only).
    #[napi(ts_return_type = "Promise<NativeChildren>")]
    pub fn children<'env>(
        &self,
        env: &'env Env,
        dir: String,
        after: Option<String>,
        limit: f64,
    ) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| Ok(NativeChildren::from(m.children(&dir, after.as_deref(), page_size(limit))?)))
    }

    /// Memories with their content after `after`, at most `limit`, each page from the newest state.
    #[napi(ts_return_type = "Promise<NativeExportPage>")]
    pub fn export_page<'env>(&self, env: &'env Env, after: Option<String>, limit: f64) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| {
            Ok(NativeExportPage::from(m.export_page(None, after.as_deref(), page_size(limit))?))
        })
    }

    /// The same page as of `snapshot`, so that every page of one export sees one state.
    #[napi(ts_return_type = "Promise<NativeExportPage>")]
    pub fn export_page_at(
        &self,
        snapshot: &NativeSnapshot,
        after: Option<String>,
        limit: f64,
    ) -> AsyncTask<Work<NativeExportPage>> {
        let (m, snap) = (self.inner.clone(), snapshot.pinned());
        work(move || {
            let snap = snap.ok_or_else(|| Fault {
                code: crate::fault_codes::INVALID_ARGUMENT,
                message: "export at a snapshot that was released".into(),
                holder: None,
                expired: None,
            })?;
            Ok(NativeExportPage::from(m.export_page(Some(&snap), after.as_deref(), page_size(limit))?))
        })
    }
}
