//! The change feed on `NativeMemories` (rabosh-memory's `feed.rs`): its own `#[napi] impl`
//! block. A page crosses as plain objects; the cursor stays the opaque string the core made.

use napi::Env;
use napi::bindgen_prelude::Object;
use napi_derive::napi;

use crate::fault::Fault;
use crate::memories::NativeMemories;

#[napi(object)]
pub struct NativeChange {
    pub path: String,
    /// `created`, `modified`, `deleted`, `renamedFrom` or `renamedTo`.
    pub kind: String,
}

#[napi(object)]
pub struct NativeChangePage {
    pub changes: Vec<NativeChange>,
    pub cursor: String,
    pub reset: bool,
}

#[napi]
impl NativeMemories {
    /// The paths of this handler's scope that changed after `since` (none: from the start),
    /// oldest first, at most `limit`.
    #[napi(ts_return_type = "Promise<NativeChangePage>")]
    pub fn changes<'env>(
        &self,
        env: &'env Env,
        since: Option<String>,
        limit: Option<u32>,
    ) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| -> Result<NativeChangePage, Fault> {
            let page = m.changes(since.as_deref(), limit.map(|l| l as usize))?;
            Ok(NativeChangePage {
                changes: page
                    .changes
                    .into_iter()
                    .map(|c| NativeChange { path: c.path, kind: c.kind.name().to_string() })
                    .collect(),
                cursor: page.cursor.encode(),
                reset: page.reset,
            })
        })
    }
}
