//! `sslmode` as libpq defines it, over rustls. The client library accepts only disable, prefer
//! and require, and checks nothing about certificates itself, so the URL's `sslmode` and
//! `sslrootcert` are taken out here and turned into a rustls configuration:
//!
//! | sslmode | TLS | certificate |
//! | --- | --- | --- |
//! | disable | never | — |
//! | allow, prefer (default) | when the server offers it | not checked (encryption only, as libpq) |
//! | require | always | not checked, unless `sslrootcert` is given (then as verify-ca, as libpq) |
//! | verify-ca | always | chain to a trusted root |
//! | verify-full | always | chain and host name |
//!
//! Trusted roots are `sslrootcert` (a PEM file) when given, else Mozilla's (webpki-roots).

use std::sync::Arc;

use postgres::config::SslMode;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::error::{PgError, PgErrorKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    None,
    Chain,
    Full,
}

/// The URL without the TLS parameters, and what they asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsRequest {
    pub url: String,
    pub mode: SslMode,
    pub verify: Verify,
    pub root_cert: Option<String>,
}

pub fn split_url(url: &str) -> Result<TlsRequest, PgError> {
    let invalid = |what: &str| PgError::new(PgErrorKind::InvalidUrl, format!("invalid PostgreSQL URL: {what}"));
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(invalid("it must start with postgres:// or postgresql://"));
    }
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, q),
        None => (url, ""),
    };
    let mut kept = Vec::new();
    let mut sslmode = None;
    let mut root_cert = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "sslmode" => sslmode = Some(percent_decode(v).ok_or_else(|| invalid("bad escape in sslmode"))?),
            "sslrootcert" => root_cert = Some(percent_decode(v).ok_or_else(|| invalid("bad escape in sslrootcert"))?),
            _ => kept.push(pair),
        }
    }
    let (mode, verify) = match sslmode.as_deref().unwrap_or("prefer") {
        "disable" => (SslMode::Disable, Verify::None),
        "allow" | "prefer" => (SslMode::Prefer, Verify::None),
        "require" if root_cert.is_some() => (SslMode::Require, Verify::Chain),
        "require" => (SslMode::Require, Verify::None),
        "verify-ca" => (SslMode::Require, Verify::Chain),
        "verify-full" => (SslMode::Require, Verify::Full),
        _ => return Err(invalid("sslmode must be disable, allow, prefer, require, verify-ca or verify-full")),
    };
    let url = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    Ok(TlsRequest { url, mode, verify, root_cert })
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

pub fn connector(req: &TlsRequest) -> Result<MakeRustlsConnect, PgError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    match req.root_cert.as_deref() {
        Some(path) if path != "system" => {
            let bad = || PgError::new(PgErrorKind::Tls, "sslrootcert could not be read as PEM certificates");
            for cert in CertificateDer::pem_file_iter(path).map_err(|_| bad())? {
                roots.add(cert.map_err(|_| bad())?).map_err(|_| bad())?;
            }
        }
        _ => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|_| PgError::new(PgErrorKind::Tls, "no TLS protocol version available"))?;
    let chain = match req.verify {
        Verify::Full => return Ok(MakeRustlsConnect::new(builder.with_root_certificates(roots).with_no_client_auth())),
        Verify::Chain => Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|_| PgError::new(PgErrorKind::Tls, "no usable trusted root certificate"))?,
        ),
        Verify::None => None,
    };
    let verifier = Arc::new(NameUnchecked { chain, provider });
    let config = builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// verify-ca (`chain`: it must reach a trusted root; the name in the certificate is not
/// compared), and prefer/require without a root (no `chain`: encryption against passive
/// listeners only, as libpq does). Handshake signatures are checked either way, so the key
/// exchange is bound to the presented key.
#[derive(Debug)]
struct NameUnchecked {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for NameUnchecked {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
    // The same checks as the chain verifier's own (it is built over this provider's algorithms).
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_is_taken_out_and_mapped() {
        let r = split_url("postgres://u:p@h/db?sslmode=verify-full&application_name=x").unwrap();
        assert_eq!(r.url, "postgres://u:p@h/db?application_name=x");
        assert_eq!((r.mode, r.verify), (SslMode::Require, Verify::Full));
        let r = split_url("postgresql://h/db").unwrap();
        assert_eq!((r.mode, r.verify, r.url.as_str()), (SslMode::Prefer, Verify::None, "postgresql://h/db"));
        let r = split_url("postgres://h/db?sslmode=require&sslrootcert=%2Fca.pem").unwrap();
        assert_eq!((r.mode, r.verify, r.root_cert.as_deref()), (SslMode::Require, Verify::Chain, Some("/ca.pem")));
        assert_eq!(split_url("postgres://h/db?sslmode=disable").unwrap().mode, SslMode::Disable);
        assert_eq!(split_url("postgres://h/db?sslmode=verify-ca").unwrap().verify, Verify::Chain);
        let e = split_url("postgres://u:secret@h/db?sslmode=bogus").unwrap_err();
        assert_eq!(e.kind(), PgErrorKind::InvalidUrl);
        assert!(!e.to_string().contains("secret"));
        assert_eq!(split_url("/var/lib/store").unwrap_err().kind(), PgErrorKind::InvalidUrl);
    }
}
