//! The Board's static files, embedded from `templates/` at compile time and served at
//! `/static/<name>`. Pages link them as `/static/<name>?v=<content hash>`: a request
//! naming the current hash may be cached for a year (the URL changes with the content);
//! any other is cached briefly. Every answer carries an ETag for revalidation.

use std::sync::LazyLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use crate::domain::tokens::sha256;

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
    /// First 16 hex digits of the content's SHA-256.
    version: String,
}

fn asset(name: &'static str, content_type: &'static str, bytes: &'static [u8]) -> Asset {
    Asset { name, content_type, bytes, version: hex::encode(&sha256(bytes)[..8]) }
}

static ASSETS: LazyLock<Vec<Asset>> = LazyLock::new(|| {
    vec![
        asset("board.css", "text/css; charset=utf-8", include_bytes!("../../templates/board.css")),
        asset("favicon.svg", "image/svg+xml", include_bytes!("../../templates/favicon.svg")),
    ]
});

fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The versioned URL of an embedded file (a plain `/static/<name>` if unknown, so a
/// typo shows as a 404 in the browser rather than a panic).
pub fn href(name: &str) -> String {
    match find(name) {
        Some(a) => format!("/static/{}?v={}", a.name, a.version),
        None => format!("/static/{name}"),
    }
}

/// The `?v=` of an asset URL.
#[derive(Debug, Deserialize)]
pub struct Version {
    v: Option<String>,
}

/// `GET /static/{file}`.
pub async fn serve(req: HttpRequest, file: web::Path<String>, version: web::Query<Version>) -> HttpResponse {
    let Some(asset) = find(&file) else {
        return HttpResponse::NotFound().content_type("text/plain; charset=utf-8").body("no such file");
    };
    let etag = format!("\"{}\"", asset.version);
    let cache = if version.v.as_deref() == Some(asset.version.as_str()) {
        "public, max-age=31536000, immutable"
    } else {
        "public, max-age=300"
    };
    let fresh = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut resp = if fresh {
        HttpResponse::NotModified().finish()
    } else {
        HttpResponse::Ok().content_type(asset.content_type).body(asset.bytes)
    };
    let headers = resp.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_urls_carry_the_content_hash() {
        let css = href("board.css");
        assert!(css.starts_with("/static/board.css?v="), "{css}");
        assert_eq!(css.len(), "/static/board.css?v=".len() + 16);
        assert_eq!(href("nope.css"), "/static/nope.css");
    }
}
