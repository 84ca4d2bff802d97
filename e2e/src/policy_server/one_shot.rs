//! One HTTP/1.1 POST on a connection of its own, for bodies a server may
//! refuse before reading them whole. policy-server answers 413 as soon as
//! a body passes its limit and closes the connection, so a client still
//! writing sees a broken pipe; a pooled client would also hand the closed
//! connection to the next request. This one stops writing when the server
//! stops reading, and reads the answer it already sent.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::answer::Answer;

/// How long one exchange may take on loopback, evaluation included.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Why no answer could be read.
#[derive(Debug, thiserror::Error)]
pub enum OneShotError {
    #[error("{what}")]
    Io {
        what: &'static str,
        #[source]
        error: std::io::Error,
    },
    #[error("the server closed the connection without an answer")]
    NoAnswer,
    #[error("not an HTTP answer: {0}")]
    Malformed(String),
}

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> OneShotError {
    move |error| OneShotError::Io { what, error }
}

/// Whether a write or read failed because the server closed its end.
fn closed_by_peer(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
    )
}

/// POSTs `body` as JSON to `http://127.0.0.1:<port><path>` and returns the
/// answer, even one the server sent before it had read the whole body.
pub fn post(port: u16, path: &str, body: &[u8]) -> Result<Answer, OneShotError> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(io("connect"))?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(TIMEOUT)))
        .map_err(io("set timeouts"))?;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let sent = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body));
    match sent {
        // The server answered early and stopped reading: its answer waits.
        Err(error) if !closed_by_peer(&error) => return Err(io("send")(error)),
        _ => {}
    }
    let mut received = Vec::new();
    let mut chunk = [0_u8; 16 * 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(chunk.get(..n).unwrap_or_default()),
            // A reset after the answer arrived ends it like a close.
            Err(error) if closed_by_peer(&error) => break,
            Err(error) => return Err(io("receive")(error)),
        }
    }
    parse(&received)
}

/// The status and body of a whole answer (`Connection: close`, so the body
/// runs to the end, or is chunked).
fn parse(received: &[u8]) -> Result<Answer, OneShotError> {
    if received.is_empty() {
        return Err(OneShotError::NoAnswer);
    }
    let malformed = |what: &str| OneShotError::Malformed(what.to_owned());
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(received) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Err(malformed("the head is cut short")),
        Err(error) => return Err(OneShotError::Malformed(error.to_string())),
    };
    let status = response.code.ok_or_else(|| malformed("no status"))?;
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).into_owned())
    };
    let rest = received.get(head_len..).unwrap_or_default();
    let body = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        dechunk(rest)?
    } else {
        let length = header("content-length").and_then(|v| v.trim().parse().ok());
        rest.get(..length.unwrap_or(rest.len()).min(rest.len()))
            .unwrap_or_default()
            .to_vec()
    };
    Ok(Answer {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// The body of a chunked transfer, its chunks joined.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, OneShotError> {
    let mut body = Vec::new();
    loop {
        let (start, size) = match httparse::parse_chunk_size(rest) {
            Ok(httparse::Status::Complete((start, size))) => (start, size),
            _ => return Err(OneShotError::Malformed("a bad chunk size".to_owned())),
        };
        if size == 0 {
            return Ok(body);
        }
        let size = usize::try_from(size)
            .map_err(|_| OneShotError::Malformed("a chunk too large".to_owned()))?;
        let end = start.saturating_add(size);
        let chunk = rest
            .get(start..end)
            .ok_or_else(|| OneShotError::Malformed("a chunk cut short".to_owned()))?;
        body.extend_from_slice(chunk);
        // Each chunk ends with CRLF.
        rest = rest.get(end.saturating_add(2)..).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn answers_are_read_whole_or_chunked() {
        let plain =
            b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 21\r\n\r\nlength limit exceeded";
        let answer = parse(plain).unwrap();
        assert_eq!(
            (answer.status, answer.body.as_str()),
            (413, "length limit exceeded")
        );
        let chunked =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\n{\"a\r\n2\r\n\"}\r\n0\r\n\r\n";
        assert_eq!(parse(chunked).unwrap().body, "{\"a\"}");
        assert!(matches!(parse(b""), Err(OneShotError::NoAnswer)));
        assert!(matches!(
            parse(b"HTTP/1.1 200"),
            Err(OneShotError::Malformed(_))
        ));
    }

    /// A server that answers after reading a little and closes, as
    /// policy-server does above its limit: the answer still arrives.
    #[test]
    fn an_answer_sent_before_the_body_is_read_arrives() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut some = [0_u8; 1024];
            stream.read_exact(&mut some).unwrap();
            stream
                .write_all(b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 5\r\n\r\nlimit")
                .unwrap();
        });
        let answer = post(port, "/validate/p", &vec![b' '; 8 * 1024 * 1024]).unwrap();
        server.join().unwrap();
        assert_eq!((answer.status, answer.body.as_str()), (413, "limit"));
    }
}
