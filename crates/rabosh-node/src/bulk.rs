//! Whole-scope export and one-commit import, for tools that move memories to and from files.

use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use rabosh_memory::{Import, MemoryRecord};

use crate::memories::NativeMemories;
use crate::work::{Work, work};

/// One memory as plain data; `path` is normalised.
#[napi(object)]
pub struct NativeMemoryFile {
    pub path: String,
    pub content: String,
    /// Epoch milliseconds; ignored on import.
    pub created_at: Option<f64>,
    /// Epoch milliseconds; ignored on import.
    pub updated_at: Option<f64>,
}

/// `kind`: `imported` {memories, bytes} | `exists` {path} | `duplicate` {path} |
/// `too_large` {path, limit}. Anything but `imported` wrote nothing.
#[napi(object)]
pub struct NativeImport {
    pub kind: String,
    pub memories: Option<f64>,
    pub bytes: Option<f64>,
    pub path: Option<String>,
    pub limit: Option<f64>,
}

impl From<MemoryRecord> for NativeMemoryFile {
    fn from(r: MemoryRecord) -> Self {
        NativeMemoryFile {
            path: r.path,
            content: r.content,
            created_at: Some(r.created_ms as f64),
            updated_at: Some(r.updated_ms as f64),
        }
    }
}

impl From<Import> for NativeImport {
    fn from(i: Import) -> Self {
        let refused = |kind: &str, path: String, limit: Option<u64>| NativeImport {
            kind: kind.into(),
            memories: None,
            bytes: None,
            path: Some(path),
            limit: limit.map(|l| l as f64),
        };
        match i {
            Import::Imported { memories, bytes } => NativeImport {
                kind: "imported".into(),
                memories: Some(memories as f64),
                bytes: Some(bytes as f64),
                path: None,
                limit: None,
            },
            Import::Exists { path } => refused("exists", path, None),
            Import::Duplicate { path } => refused("duplicate", path, None),
            Import::TooLarge { path, limit } => refused("too_large", path, Some(limit)),
        }
    }
}

#[napi]
impl NativeMemories {
    /// Every memory of the scope, hidden ones included, read at one snapshot.
    #[napi(ts_return_type = "Promise<Array<NativeMemoryFile>>")]
    pub fn export_memories(&self) -> AsyncTask<Work<Vec<NativeMemoryFile>>> {
        let m = self.shared();
        work(move || Ok(m.export_all()?.into_iter().map(Into::into).collect()))
    }

    /// Writes every file in one commit, or nothing; paths must be normalised.
    #[napi(ts_return_type = "Promise<NativeImport>")]
    pub fn import_memories(&self, files: Vec<NativeMemoryFile>, overwrite: bool) -> AsyncTask<Work<NativeImport>> {
        let m = self.shared();
        let pairs: Vec<(String, String)> = files.into_iter().map(|f| (f.path, f.content)).collect();
        work(move || Ok(m.import_all(&pairs, overwrite)?.into()))
    }
}
