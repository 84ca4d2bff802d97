//! YAML with a named limit for each kind of input.
//!
//! serde-saphyr's default budget protects a service from untrusted input:
//! 64 levels, 1,024 documents, 250,000 nodes. The bundle's inputs are
//! larger on purpose: test cases nest as deep as policy-server accepts and
//! carry lists of 100,000 entries, and a `helm template` of a platform or a
//! cluster's reports is tens of thousands of documents. Each [`Limit`]
//! still bounds depth, nodes and bytes, and every parse runs on a thread
//! with a stack large enough for its depth (the parser recurses once per
//! level, and an unoptimised test build spends kilobytes of stack per
//! level).

use serde::de::DeserializeOwned;
use serde_saphyr::{Budget, Options};

/// A parse error; boxed, as serde-saphyr's carries the source position and
/// a snippet and is large.
pub type Error = Box<serde_saphyr::Error>;

/// What a text is, which decides how much of it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The bundle's own files: test cases, metadata, recorded sessions.
    /// Hostile on purpose: nesting twice as deep as policy-server accepts,
    /// lists of 100,000 entries.
    Cases,
    /// Manifests a user checks: a rendered platform or a cluster's export,
    /// any realistic number of documents, nested as deep as the cases (a
    /// deep object reaches the policies, which refuse it as the cluster
    /// would).
    Manifests,
    /// PolicyReports, OpenReports and the JSON of `check`: a cluster's
    /// worth of shallow documents.
    Reports,
    /// Settings files and deploy trees a person writes: serde-saphyr's
    /// defaults.
    Settings,
}

/// Stack for one parse: enough for [`DEEPEST`] levels in any build.
const STACK: usize = 256 << 20;
/// The deepest nesting read: twice what policy-server accepts.
const DEEPEST: usize = 256;
/// Documents in one stream: far beyond any platform, well short of memory.
const MOST_DOCUMENTS: usize = 10_000_000;
/// Scalar text in one stream.
const MOST_SCALAR_BYTES: usize = 1 << 30;

impl Limit {
    fn budget(self) -> Option<Budget> {
        match self {
            Limit::Cases => serde_saphyr::budget! {
                max_depth: DEEPEST,
                flow_nesting_limit: DEEPEST,
                max_nodes: 20_000_000,
                max_events: 50_000_000,
                max_total_scalar_bytes: MOST_SCALAR_BYTES,
            },
            Limit::Manifests => serde_saphyr::budget! {
                max_depth: DEEPEST,
                flow_nesting_limit: DEEPEST,
                max_documents: MOST_DOCUMENTS,
                max_nodes: 100_000_000,
                max_events: 400_000_000,
                max_total_scalar_bytes: MOST_SCALAR_BYTES,
            },
            Limit::Reports => serde_saphyr::budget! {
                max_documents: MOST_DOCUMENTS,
                max_nodes: 100_000_000,
                max_events: 400_000_000,
                max_total_scalar_bytes: MOST_SCALAR_BYTES,
            },
            Limit::Settings => Some(Budget::default()),
        }
    }

    fn options(self) -> Options {
        serde_saphyr::options! { budget: self.budget() }
    }
}

/// Reads one document.
pub fn document<T: DeserializeOwned + Send>(text: &str, limit: Limit) -> Result<T, Error> {
    on_a_large_stack(|| serde_saphyr::from_str_with_options(text, limit.options()))
}

/// Reads every document of a stream; an empty stream has none.
pub fn documents<T: DeserializeOwned + Send>(text: &str, limit: Limit) -> Result<Vec<T>, Error> {
    on_a_large_stack(|| serde_saphyr::from_multiple_with_options(text, limit.options()))
}

/// Reads the documents of a stream from `reader` one at a time, handing
/// each to `each` as it is read, so only one document is ever held (a
/// cluster's snapshot runs to hundreds of megabytes); stops at the first
/// error, the parser's or `each`'s.
///
/// The stream is cut where YAML ends a document, at a line that starts
/// with `---` or `...` followed by a space or nothing (no scalar may hold
/// such a line: YAML forbids it, `c-forbidden`). A document in flow style
/// that JSON reads (what `kubectl get -o json` and the capture block's
/// go-templates write) is read as JSON, ten times faster; any other with
/// serde-saphyr.
pub fn for_each_document<T, R, E>(
    reader: R,
    limit: Limit,
    mut each: impl FnMut(T) -> Result<(), E> + Send,
) -> Result<(), Streamed<E>>
where
    T: DeserializeOwned,
    R: std::io::BufRead + Send,
    E: Send,
{
    let run = move || {
        let mut chunk = String::new();
        let mut flush = |chunk: &mut String| -> Result<(), Streamed<E>> {
            let text = std::mem::take(chunk);
            if text.trim().is_empty() {
                return Ok(());
            }
            if text.trim_start().starts_with('{')
                && let Ok(document) = serde_json::from_str::<T>(&text)
            {
                return each(document).map_err(Streamed::Each);
            }
            let documents: Vec<T> =
                serde_saphyr::from_multiple_with_options(&text, limit.options())
                    .map_err(|e| Streamed::Yaml(Box::new(e)))?;
            documents
                .into_iter()
                .try_for_each(|d| each(d).map_err(Streamed::Each))
        };
        for line in reader.lines() {
            let line = line.map_err(|e| Streamed::Yaml(Box::new(serde::de::Error::custom(e))))?;
            let marker = ["---", "..."].iter().find_map(|m| {
                line.strip_prefix(m)
                    .filter(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
            });
            match marker {
                Some(rest) => {
                    flush(&mut chunk)?;
                    chunk.push_str(rest);
                }
                None => chunk.push_str(&line),
            }
            chunk.push('\n');
        }
        flush(&mut chunk)
    };
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, run)
            .map_err(|e| Streamed::Yaml(Box::new(serde::de::Error::custom(e))))?
            .join()
            .unwrap_or_else(|_| {
                Err(Streamed::Yaml(Box::new(serde::de::Error::custom(
                    "the YAML parser panicked",
                ))))
            })
    })
}

/// Why a stream stopped: its YAML, or what was done with a document.
#[derive(Debug)]
pub enum Streamed<E> {
    Yaml(Error),
    Each(E),
}

/// Runs a parse on a thread with [`STACK`]; where no thread can be started
/// (the browser), on the caller's.
fn on_a_large_stack<T: Send>(
    parse: impl Fn() -> Result<T, serde_saphyr::Error> + Sync,
) -> Result<T, Error> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, &parse)
            .map_or_else(
                |_| parse(),
                |thread| thread.join().unwrap_or_else(|_| parse_panicked()),
            )
    })
    .map_err(Box::new)
}

/// A parse whose thread panicked: reported as a parse error.
fn parse_panicked<T>() -> Result<T, serde_saphyr::Error> {
    Err(serde::de::Error::custom("the YAML parser panicked"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn cases_are_read_deep_and_long() {
        // Deeper than policy-server accepts (126 levels).
        let deep = format!("{}1{}", "[".repeat(150), "]".repeat(150));
        assert!(document::<Value>(&deep, Limit::Cases).is_ok());
        let long = format!("[{}]", vec!["1"; 300_000].join(","));
        let list: Vec<u8> = document(&long, Limit::Cases).unwrap();
        assert_eq!(list.len(), 300_000);
        let too_deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        assert!(document::<Value>(&too_deep, Limit::Cases).is_err());
    }

    #[test]
    fn manifests_and_reports_are_read_by_the_hundred_thousand() {
        let stream: String = (0..100_000)
            .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i}}}\n"))
            .collect();
        for limit in [Limit::Manifests, Limit::Reports] {
            let read: Vec<Value> = documents(&stream, limit).unwrap();
            assert_eq!(read.len(), 100_000, "{limit:?}");
            assert_eq!(read[99_999]["metadata"]["name"], "cm-99999");
        }
        let refused = documents::<Value>(&stream, Limit::Settings).unwrap_err();
        assert!(refused.to_string().contains("budget"), "{refused}");
    }

    #[test]
    fn streams_are_read_a_document_at_a_time() {
        let stream = "a: 1\n--- {\"a\": 2}\n---\na: 3\n...\n---\nb: |\n  ---x\n---\nnot: [closed\n";
        let mut seen = Vec::new();
        let error = for_each_document(stream.as_bytes(), Limit::Manifests, |v: Value| {
            seen.push(v["a"].clone());
            Ok::<(), ()>(())
        })
        .unwrap_err();
        assert_eq!(seen, [json!(1), json!(2), json!(3), Value::Null]);
        assert!(matches!(error, Streamed::Yaml(_)));
        let stopped = for_each_document(
            "a: 1\n---\na: 2\n".as_bytes(),
            Limit::Manifests,
            |_: Value| Err("no"),
        );
        assert!(matches!(stopped, Err(Streamed::Each("no"))));
    }

    #[test]
    fn an_empty_stream_has_no_documents() {
        assert!(documents::<Value>("", Limit::Manifests).unwrap().is_empty());
    }
}
