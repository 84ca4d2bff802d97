//! YAML as the bundle's files use it: test cases may be hostile on purpose
//! (nesting as deep as policy-server accepts, lists of 100,000 entries), so
//! they are read with a larger budget than serde-saphyr's defaults, which
//! protect against untrusted input. The budget still bounds depth, nodes
//! and bytes, and the parse runs on a thread with a stack large enough for
//! that depth (the parser recurses once per level, and an unoptimised
//! test build spends kilobytes of stack per level).

use serde::de::DeserializeOwned;

/// Stack for one parse: enough for [`MAX_DEPTH`] levels in any build.
const STACK: usize = 256 << 20;
/// The deepest nesting read: twice what policy-server accepts.
const MAX_DEPTH: usize = 256;

/// Reads one YAML document of the bundle's own files. The error is boxed:
/// serde-saphyr's carries the source position and snippet, and is large.
pub fn from_str<T: DeserializeOwned + Send>(text: &str) -> Result<T, Box<serde_saphyr::Error>> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, || parse(text))
            .map_or_else(
                |_| parse(text),
                |parse| parse.join().unwrap_or_else(|_| parse_failed()),
            )
    })
    .map_err(Box::new)
}

fn parse<T: DeserializeOwned>(text: &str) -> Result<T, serde_saphyr::Error> {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            flow_nesting_limit: MAX_DEPTH,
            max_nodes: 20_000_000,
            max_events: 50_000_000,
            max_total_scalar_bytes: 1 << 30,
        },
    };
    serde_saphyr::from_str_with_options(text, options)
}

/// A parse whose thread panicked: reported as a parse error.
fn parse_failed<T>() -> Result<T, serde_saphyr::Error> {
    Err(serde::de::Error::custom("the YAML parser panicked"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_and_long_documents_are_read() {
        // Deeper than policy-server accepts (126 levels).
        let deep = format!("{}1{}", "[".repeat(150), "]".repeat(150));
        assert!(from_str::<serde_json::Value>(&deep).is_ok());
        let long = format!("[{}]", vec!["1"; 300_000].join(","));
        let list: Vec<u8> = from_str(&long).unwrap();
        assert_eq!(list.len(), 300_000);
        let too_deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        assert!(from_str::<serde_json::Value>(&too_deep).is_err());
    }
}
