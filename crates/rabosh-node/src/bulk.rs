//! Whole-scope export and one-commit import, for tools that move memories to and from files.

use napi::Env;
use napi::bindgen_prelude::Object;
use napi_derive::napi;
use rabosh_memory::{Import, MemoryRecord};

use crate::memories::NativeMemories;

/// One memory to import; `path` is normalised.
#[napi(object)]
pub struct NativeMemoryFile {
    pub path: String,
    pub content: String,
}

/// One memory as exported, with its timestamps in epoch milliseconds.
#[napi(object)]
pub struct NativeExportedMemory {
    pub path: String,
    pub content: String,
    pub created_at: f64,
    pub updated_at: f64,
}

/// What an import did; anything but `Imported` wrote nothing.
#[napi]
pub enum NativeImport {
    Imported { memories: f64, bytes: f64 },
    Exists { path: String },
    Duplicate { path: String },
    TooLarge { path: String, limit: f64 },
}

impl From<MemoryRecord> for NativeExportedMemory {
    fn from(r: MemoryRecord) -> Self {
        NativeExportedMemory {
            path: r.path,
            content: r.content,
            created_at: r.created_ms as f64,
            updated_at: r.updated_ms as f64,
        }
    }
}

impl From<Import> for NativeImport {
    fn from(i: Import) -> Self {
        match i {
            Import::Imported { memories, bytes } => {
                NativeImport::Imported { memories: memories as f64, bytes: bytes as f64 }
            }
            Import::Exists { path } => NativeImport::Exists { path },
            Import::Duplicate { path } => NativeImport::Duplicate { path },
            Import::TooLarge { path, limit } => NativeImport::TooLarge { path, limit: limit as f64 },
        }
    }
}

#[napi]
impl NativeMemories {
    /// Every memory of the scope, hidden ones included, read at one snapshot.
    #[napi(ts_return_type = "Promise<Array<NativeExportedMemory>>")]
    pub fn export_memories<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        self.off_thread(env, |m| Ok(m.export_all()?.into_iter().map(NativeExportedMemory::from).collect::<Vec<_>>()))
    }

    /// Writes every file in one commit, or nothing; paths must be normalised.
    #[napi(ts_return_type = "Promise<NativeImport>")]
    pub fn import_memories<'env>(
        &self,
        env: &'env Env,
        files: Vec<NativeMemoryFile>,
        overwrite: bool,
    ) -> napi::Result<Object<'env>> {
        let pairs: Vec<(String, String)> = files.into_iter().map(|f| (f.path, f.content)).collect();
        // A commit like the commands', on the store's writer thread: a large import's buffers
        // then come from that thread's heap, not from whichever of the pool's threads each chunk
        // landed on (glibc gives every thread a heap of its own, each kept at its high-water mark).
        self.committing::<_, _, NativeImport>(env, move |m| m.import_all(&pairs, overwrite))
    }
}
