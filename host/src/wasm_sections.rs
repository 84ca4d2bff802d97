//! Custom sections of a WebAssembly binary.
//!
//! kwctl keeps a policy's metadata in the custom section
//! `io.kubewarden.metadata`. Reading and replacing a custom section needs
//! nothing more than walking the top-level section list (id byte, LEB128
//! size, contents), so this module does exactly that.

/// Name of the custom section that carries a policy's metadata.
pub const METADATA_SECTION: &str = "io.kubewarden.metadata";

const PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
const CUSTOM_SECTION_ID: u8 = 0;

/// A binary that is not a well-formed WebAssembly module.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SectionError {
    #[error("not a WebAssembly module (bad magic number or version)")]
    NotWasm,
    #[error("truncated section at byte {0}")]
    Truncated(usize),
    #[error("custom section name at byte {0} is not UTF-8")]
    BadName(usize),
}

/// One top-level section: its id and the byte range of the whole section
/// (header included) and of its contents.
struct Section {
    id: u8,
    whole: std::ops::Range<usize>,
    contents: std::ops::Range<usize>,
}

fn read_leb128_u32(bytes: &[u8], mut at: usize) -> Result<(u32, usize), SectionError> {
    let start = at;
    let mut value: u32 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *bytes.get(at).ok_or(SectionError::Truncated(start))?;
        at += 1;
        value |= u32::from(byte & 0x7f)
            .checked_shl(shift)
            .ok_or(SectionError::Truncated(start))?;
        if byte & 0x80 == 0 {
            return Ok((value, at));
        }
    }
    Err(SectionError::Truncated(start))
}

fn write_leb128_u32(mut value: u32, out: &mut Vec<u8>) {
    loop {
        let low = u8::try_from(value & 0x7f).unwrap_or_default();
        value >>= 7;
        if value == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

fn sections(wasm: &[u8]) -> Result<Vec<Section>, SectionError> {
    if wasm.get(..PREAMBLE.len()) != Some(&PREAMBLE[..]) {
        return Err(SectionError::NotWasm);
    }
    let mut found = Vec::new();
    let mut at = PREAMBLE.len();
    while at < wasm.len() {
        let start = at;
        let id = *wasm.get(at).ok_or(SectionError::Truncated(start))?;
        let (size, contents_start) = read_leb128_u32(wasm, at + 1)?;
        let end = usize::try_from(size)
            .ok()
            .and_then(|size| contents_start.checked_add(size))
            .filter(|end| *end <= wasm.len())
            .ok_or(SectionError::Truncated(start))?;
        found.push(Section {
            id,
            whole: start..end,
            contents: contents_start..end,
        });
        at = end;
    }
    Ok(found)
}

/// Splits a custom section's contents into its name and payload.
fn custom_name_and_data(
    wasm: &[u8],
    contents: &std::ops::Range<usize>,
) -> Result<(String, std::ops::Range<usize>), SectionError> {
    let (name_len, name_start) = read_leb128_u32(wasm, contents.start)?;
    let name_end = usize::try_from(name_len)
        .ok()
        .and_then(|len| name_start.checked_add(len))
        .filter(|end| *end <= contents.end)
        .ok_or(SectionError::Truncated(contents.start))?;
    let name_bytes = wasm
        .get(name_start..name_end)
        .ok_or(SectionError::Truncated(contents.start))?;
    let name = std::str::from_utf8(name_bytes)
        .map_err(|_| SectionError::BadName(contents.start))?
        .to_owned();
    Ok((name, name_end..contents.end))
}

/// The payload of the first custom section called `name`, if any.
pub fn read_custom_section<'w>(
    wasm: &'w [u8],
    name: &str,
) -> Result<Option<&'w [u8]>, SectionError> {
    for section in sections(wasm)? {
        if section.id != CUSTOM_SECTION_ID {
            continue;
        }
        let (section_name, data) = custom_name_and_data(wasm, &section.contents)?;
        if section_name == name {
            return Ok(wasm.get(data));
        }
    }
    Ok(None)
}

/// A copy of `wasm` with every custom section called `name` removed and one
/// new section of that name, holding `data`, appended at the end.
pub fn replace_custom_section(
    wasm: &[u8],
    name: &str,
    data: &[u8],
) -> Result<Vec<u8>, SectionError> {
    let mut out = Vec::with_capacity(wasm.len() + data.len() + name.len() + 16);
    out.extend_from_slice(&PREAMBLE);
    for section in sections(wasm)? {
        if section.id == CUSTOM_SECTION_ID
            && custom_name_and_data(wasm, &section.contents)?.0 == name
        {
            continue;
        }
        out.extend_from_slice(wasm.get(section.whole).unwrap_or_default());
    }
    let mut contents = Vec::with_capacity(name.len() + data.len() + 5);
    write_leb128_u32(u32::try_from(name.len()).unwrap_or(u32::MAX), &mut contents);
    contents.extend_from_slice(name.as_bytes());
    contents.extend_from_slice(data);
    out.push(CUSTOM_SECTION_ID);
    write_leb128_u32(u32::try_from(contents.len()).unwrap_or(u32::MAX), &mut out);
    out.extend_from_slice(&contents);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(module (func))` with a type, function and code section.
    fn tiny_module() -> Vec<u8> {
        let mut m = PREAMBLE.to_vec();
        m.extend_from_slice(&[0x01, 0x04, 0x01, 0x60, 0x00, 0x00]); // type
        m.extend_from_slice(&[0x03, 0x02, 0x01, 0x00]); // function
        m.extend_from_slice(&[0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b]); // code
        m
    }

    #[test]
    fn leb128_round_trips() {
        for value in [0u32, 1, 127, 128, 300, 16_384, u32::MAX] {
            let mut bytes = Vec::new();
            write_leb128_u32(value, &mut bytes);
            assert_eq!(read_leb128_u32(&bytes, 0).unwrap(), (value, bytes.len()));
        }
    }

    #[test]
    fn adds_then_replaces_a_section() {
        let once = replace_custom_section(&tiny_module(), METADATA_SECTION, b"{\"a\":1}").unwrap();
        assert_eq!(
            read_custom_section(&once, METADATA_SECTION).unwrap(),
            Some(&b"{\"a\":1}"[..])
        );
        let twice = replace_custom_section(&once, METADATA_SECTION, &[b'x'; 300]).unwrap();
        assert_eq!(
            read_custom_section(&twice, METADATA_SECTION).unwrap(),
            Some(&[b'x'; 300][..])
        );
        assert_eq!(
            twice.len() - tiny_module().len(),
            2 + 1 + METADATA_SECTION.len() + 300 + 1
        );
    }

    #[test]
    fn missing_section_is_none() {
        assert_eq!(
            read_custom_section(&tiny_module(), METADATA_SECTION).unwrap(),
            None
        );
    }

    #[test]
    fn refuses_non_wasm_and_truncated_input() {
        assert_eq!(
            read_custom_section(b"hello world", "x").unwrap_err(),
            SectionError::NotWasm
        );
        let mut cut = tiny_module();
        cut.truncate(cut.len() - 2);
        assert!(matches!(
            read_custom_section(&cut, "x"),
            Err(SectionError::Truncated(_))
        ));
    }
}
