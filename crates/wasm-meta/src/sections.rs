//! The custom section where kwctl keeps a policy's metadata.
//!
//! `kwctl annotate` stores the metadata as JSON in the custom section
//! `io.kubewarden.metadata`. Sections are read with `wasmparser` and a new
//! one is written with `wasm-encoder`, the crates wasmtime itself is built
//! on; every other section is copied byte for byte.

use std::borrow::Cow;

use wasm_encoder::{CustomSection, Encode, Section};
use wasmparser::{Chunk, Parser, Payload};

/// Name of the custom section that carries a policy's metadata.
pub const METADATA_SECTION: &str = "io.kubewarden.metadata";

/// A binary that is not a well-formed WebAssembly module.
#[derive(Debug, thiserror::Error)]
#[error("not a WebAssembly module")]
pub struct SectionError(#[from] wasmparser::BinaryReaderError);

/// The contents of the custom section `name`, if the module has one.
pub fn read_custom_section<'a>(
    wasm: &'a [u8],
    name: &str,
) -> Result<Option<&'a [u8]>, SectionError> {
    for payload in Parser::new(0).parse_all(wasm) {
        if let Payload::CustomSection(section) = payload?
            && section.name() == name
        {
            return Ok(Some(section.data()));
        }
    }
    Ok(None)
}

/// `wasm` with the custom section `name` holding `data`: an existing one is
/// dropped, the new one appended last (where kwctl puts it).
pub fn replace_custom_section(
    wasm: &[u8],
    name: &str,
    data: &[u8],
) -> Result<Vec<u8>, SectionError> {
    let mut out = without_custom_section(wasm, name)?;
    let section = CustomSection {
        name: Cow::Borrowed(name),
        data: Cow::Borrowed(data),
    };
    out.push(section.id());
    section.encode(&mut out);
    Ok(out)
}

/// `wasm` without its custom sections `name`. The parser reports how many
/// bytes each part took, so every other part is copied exactly as it was.
pub fn without_custom_section(wasm: &[u8], name: &str) -> Result<Vec<u8>, SectionError> {
    let mut out = Vec::with_capacity(wasm.len());
    let mut parser = Parser::new(0);
    let mut rest = wasm;
    // With `eof` set, an incomplete module is an error, never a request for
    // more data.
    while let Chunk::Parsed { consumed, payload } = parser.parse(rest, true)? {
        let (part, after) = rest.split_at_checked(consumed).unwrap_or((rest, &[]));
        match payload {
            Payload::CustomSection(section) if section.name() == name => {}
            Payload::End(_) => break,
            _ => out.extend_from_slice(part),
        }
        rest = after;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module with a type section and a custom section `a`.
    fn module() -> Vec<u8> {
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        wasm.extend_from_slice(&[1, 4, 1, 0x60, 0, 0]); // type: one () -> ()
        let section = CustomSection {
            name: Cow::Borrowed("a"),
            data: Cow::Borrowed(b"old"),
        };
        wasm.push(section.id());
        section.encode(&mut wasm);
        wasm
    }

    fn parses(wasm: &[u8]) -> bool {
        Parser::new(0)
            .parse_all(wasm)
            .all(|payload| payload.is_ok())
    }

    #[test]
    fn sections_are_replaced_and_read_back() {
        let annotated = replace_custom_section(&module(), METADATA_SECTION, b"{}").unwrap();
        assert_eq!(
            read_custom_section(&annotated, METADATA_SECTION).unwrap(),
            Some(&b"{}"[..])
        );
        assert_eq!(
            read_custom_section(&annotated, "a").unwrap(),
            Some(&b"old"[..])
        );
        let again = replace_custom_section(&annotated, METADATA_SECTION, b"{\"x\":1}").unwrap();
        assert_eq!(
            read_custom_section(&again, METADATA_SECTION).unwrap(),
            Some(&b"{\"x\":1}"[..])
        );
        assert_eq!(again.len(), annotated.len() + 5, "replaced, not added");
        let stripped = replace_custom_section(&again, "a", b"new").unwrap();
        assert_eq!(
            read_custom_section(&stripped, "a").unwrap(),
            Some(&b"new"[..])
        );
        assert!(parses(&stripped));
        let without = without_custom_section(&again, METADATA_SECTION).unwrap();
        assert_eq!(without, module(), "the module as it was before annotation");
    }

    #[test]
    fn large_sections_keep_their_long_size_prefix() {
        let big = vec![7u8; 300];
        let once = replace_custom_section(&module(), "big", &big).unwrap();
        let twice = replace_custom_section(&once, METADATA_SECTION, b"m").unwrap();
        assert_eq!(read_custom_section(&twice, "big").unwrap(), Some(&big[..]));
        assert!(parses(&twice));
    }

    #[test]
    fn other_bytes_are_not_a_module() {
        assert!(read_custom_section(b"not wasm", METADATA_SECTION).is_err());
        assert!(replace_custom_section(b"\0asm\x01\0\0\0\x01\x05", "x", b"").is_err());
    }
}
