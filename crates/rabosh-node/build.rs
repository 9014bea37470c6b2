//! Link settings a Node addon needs, and nothing that makes Cargo rebuild it without cause.
//!
//! `napi_build::setup()` also declares `rerun-if-env-changed=NAPI_FORCE_BUILD_RABOSH_NODE`.
//! `napi build` sets that variable to the current time whenever its type-definition cache folder
//! lacks this crate's file (a fresh checkout, a moved target directory), and leaves it unset
//! otherwise; Cargo sees the value change from a timestamp to nothing, so the build after every
//! such build recompiled this crate with no source change (about 30 s in release). The type
//! definitions are already regenerated whenever they must be: a new cache folder changes
//! `NAPI_TYPE_DEF_TMP_FOLDER`, which is tracked below. So this script emits the settings
//! itself, for the targets the package ships, and tracks only real inputs.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Read by napi-derive while it expands the exported items (where it writes type definitions,
    // whether it dumps generated code); a change must recompile the crate.
    for var in [
        "NAPI_TYPE_DEF_TMP_FOLDER",
        "NAPI_DEBUG_GENERATED_CODE",
        "TYPE_DEF_TMP_PATH",
        "DEBUG_GENERATED_CODE",
        "CARGO_CFG_NAPI_RS_CLI_VERSION",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let abi = env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    match os.as_str() {
        // Node's N-API symbols are resolved when the addon is loaded into the process.
        "macos" => {
            for arg in ["-Wl", "-undefined", "dynamic_lookup"] {
                println!("cargo:rustc-cdylib-link-arg={arg}");
            }
        }
        // glibc runs thread-local destructors after a dlclose'd library is gone (glibc bugs
        // 21031/21032): keep the addon mapped until the process exits.
        "linux" if abi == "gnu" => println!("cargo:rustc-link-arg=-Wl,-z,nodelete"),
        // musl and MSVC need nothing; other targets are not shipped.
        _ => {}
    }
}
