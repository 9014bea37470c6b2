//! A rendered answer (a file view, a listing) as it crosses to JS. When the text is all ASCII,
//! which nearly every memory is, it crosses as Latin-1: V8 then copies the bytes into a one-byte
//! string, where `napi_create_string_utf8` first decodes them (callgrind, one 4 KiB file view:
//! docs/investigations/view-instructions.md). Other text crosses as UTF-8, as a `String` does.
//!
//! `to_napi_value` is an unsafe trait method (its caller vouches for `env`); its body hands that
//! same `env` on to napi-rs's own conversions.
#![allow(unsafe_code)]

use napi::bindgen_prelude::{ToNapiValue, TypeName};
use napi::{Env, ValueType, sys};

/// Text that is valid UTF-8 by construction; `Ascii` when every byte is below 0x80.
pub enum Text {
    Ascii(Vec<u8>),
    Utf8(String),
}

impl Text {
    /// A rendered answer: UTF-8 bytes copied whole from `&str` slices and ASCII, so never cut
    /// inside a character; `ascii` when the renderer knows every part was ASCII.
    pub fn rendered(bytes: Vec<u8>, ascii: bool) -> Text {
        if ascii {
            return Text::Ascii(bytes);
        }
        // A pass over non-ASCII text only; it cannot fail for bytes made as above.
        Text::Utf8(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    #[cfg(test)]
    pub fn as_str(&self) -> &str {
        match self {
            Text::Ascii(b) => std::str::from_utf8(b).expect("ASCII"),
            Text::Utf8(s) => s,
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        if s.is_ascii() { Text::Ascii(s.into_bytes()) } else { Text::Utf8(s) }
    }
}

impl TypeName for Text {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ToNapiValue for Text {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        match val {
            Text::Ascii(bytes) => {
                let env_ref = Env::from_raw(env);
                let s = env_ref.create_string_latin1(&bytes)?;
                // SAFETY: `env` is live and this is its JS thread (this method's contract, kept by
                // its caller); the string was just made in `env`, the environment it returns to.
                unsafe { ToNapiValue::to_napi_value(env, s) }
            }
            // SAFETY: the same `env` under the same contract, as napi-rs converts any String.
            Text::Utf8(s) => unsafe { String::to_napi_value(env, s) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_only_when_every_byte_is() {
        assert!(matches!(Text::from("abc\t1\n".to_string()), Text::Ascii(_)));
        assert!(matches!(Text::from("é".to_string()), Text::Utf8(_)));
        assert!(matches!(Text::rendered("é".as_bytes().to_vec(), false), Text::Utf8(s) if s == "é"));
        assert_eq!(Text::rendered(b"x".to_vec(), true).as_str(), "x");
    }
}
