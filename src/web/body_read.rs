//! Reading a request body with bounds, for the APIs' JSON bodies and for intake:
//!
//! - at most `limit` bytes: a larger declared length is refused before reading, and a
//!   body that grows past the limit as it streams is refused then (413);
//! - nothing reserved from the declared length beyond [`MAX_RESERVATION`]: a client
//!   may declare a megabyte and send ten bytes, and many such clients at once would
//!   otherwise cost their declared sizes in memory up front;
//! - at most the read timeout from the first poll to the last byte (408): a client
//!   that sends its headers and then trickles or stalls holds nothing forever.

use std::time::Duration;

use actix_web::web::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};

use crate::error::Error;

/// The most reserved up front, whatever the declared length; the buffer grows as bytes
/// actually arrive.
pub const MAX_RESERVATION: usize = 16 * 1024;

/// The read timeout where the application state is not at hand (the setting's default).
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Reads the whole body from `stream` under the bounds above. `declared` is the
/// request's `Content-Length`, when it has one.
pub async fn read_bounded<S, E>(
    stream: S,
    declared: Option<usize>,
    limit: usize,
    timeout: Duration,
) -> Result<BytesMut, Error>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    if declared.is_some_and(|n| n > limit) {
        return Err(Error::PayloadTooLarge(limit));
    }
    tokio::time::timeout(timeout, read_all(stream, declared, limit)).await.map_err(|_| Error::RequestTimeout)?
}

async fn read_all<S, E>(mut stream: S, declared: Option<usize>, limit: usize) -> Result<BytesMut, Error>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    let mut buf = BytesMut::with_capacity(declared.unwrap_or(0).min(MAX_RESERVATION));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| Error::InvalidArgument("body: could not be read".into()))?;
        if buf.len() + chunk.len() > limit {
            return Err(Error::PayloadTooLarge(limit));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf)
}

/// The `Content-Length` a request declares, if it is a number.
pub fn declared_length(req: &actix_web::HttpRequest) -> Option<usize> {
    req.headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// Longest a request body may take to arrive once its headers have
/// (`SWITCHBOARD_BODY_READ_TIMEOUT_MS`); registered as app data by start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTimeout(pub Duration);

/// The configured read timeout of the application serving `req`.
pub fn read_timeout(req: &actix_web::HttpRequest) -> Duration {
    req.app_data::<actix_web::web::Data<ReadTimeout>>().map_or(DEFAULT_READ_TIMEOUT, |t| t.0)
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use futures_util::stream;

    use super::*;

    const MIB: usize = 1024 * 1024;

    fn chunks(parts: &[&'static [u8]]) -> impl Stream<Item = Result<Bytes, Infallible>> + Unpin {
        stream::iter(parts.iter().map(|p| Ok(Bytes::from_static(p))).collect::<Vec<_>>())
    }

    #[actix_rt::test]
    async fn a_declared_megabyte_that_brings_ten_bytes_reserves_no_megabyte() {
        let buf = read_bounded(chunks(&[b"0123456789"]), Some(MIB), MIB, DEFAULT_READ_TIMEOUT).await.unwrap();
        assert_eq!(&buf[..], b"0123456789");
        assert!(buf.capacity() <= MAX_RESERVATION, "reserved {} bytes for 10", buf.capacity());
    }

    #[actix_rt::test]
    async fn a_body_over_the_limit_is_refused_declared_or_as_it_streams() {
        let declared = read_bounded(chunks(&[]), Some(11), 10, DEFAULT_READ_TIMEOUT).await;
        assert!(matches!(declared, Err(Error::PayloadTooLarge(10))), "{declared:?}");
        let streamed = read_bounded(chunks(&[b"012345", b"6789x"]), None, 10, DEFAULT_READ_TIMEOUT).await;
        assert!(matches!(streamed, Err(Error::PayloadTooLarge(10))), "{streamed:?}");
        let exact = read_bounded(chunks(&[b"01234", b"56789"]), None, 10, DEFAULT_READ_TIMEOUT).await.unwrap();
        assert_eq!(exact.len(), 10);
    }

    #[actix_rt::test]
    async fn a_body_that_stalls_is_refused_once_the_timeout_passes() {
        let stalled = chunks(&[b"{\"partial\":"]).chain(stream::pending());
        let read = read_bounded(Box::pin(stalled), Some(100), MIB, Duration::from_millis(20)).await;
        assert!(matches!(read, Err(Error::RequestTimeout)), "{read:?}");
    }
}
