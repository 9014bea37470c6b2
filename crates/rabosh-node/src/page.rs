//! One page of a scope's memories, from their metadata alone (see `rabosh_memory::MemoryPage`).

use napi::Env;
use napi::bindgen_prelude::Object;
use napi_derive::napi;
use rabosh_memory::MemoryPage;

use crate::memories::NativeMemories;

/// A memory as a listing shows it: its size in UTF-8 bytes, its last change in epoch milliseconds.
#[napi(object)]
pub struct NativeListedMemory {
    pub path: String,
    pub size: f64,
    pub updated_at: f64,
}

/// Up to the page's limit of memories, and whether any follow the last of them.
#[napi(object)]
pub struct NativeMemoryPage {
    pub memories: Vec<NativeListedMemory>,
    pub more: bool,
}

impl From<MemoryPage> for NativeMemoryPage {
    fn from(p: MemoryPage) -> Self {
        NativeMemoryPage {
            memories: p
                .memories
                .into_iter()
                .map(|m| NativeListedMemory { path: m.path, size: m.size as f64, updated_at: m.updated_ms as f64 })
                .collect(),
            more: p.more,
        }
    }
}

#[napi]
impl NativeMemories {
    /// The first `limit` memories whose path sorts after `after` (absent: from the first) and
    /// contains `contains` in lower case (absent or empty: every path), in byte order of the
    /// path, at one snapshot; `after` is normalised.
    #[napi(ts_return_type = "Promise<NativeMemoryPage>")]
    pub fn list_page<'env>(
        &self,
        env: &'env Env,
        after: Option<String>,
        limit: u32,
        contains: Option<String>,
    ) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| {
            let page = m.list_page(after.as_deref(), limit as usize, contains.as_deref().unwrap_or(""))?;
            Ok(NativeMemoryPage::from(page))
        })
    }
}
