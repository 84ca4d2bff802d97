//! The entry points the page calls through wasm-bindgen: JSON text in,
//! JSON text out, so the page needs no binding for each type.

// wasm-bindgen's generated glue is `unsafe` by nature (it crosses the
// JavaScript boundary); no code of ours is.
#![allow(unsafe_code)]

use wasm_bindgen::prelude::wasm_bindgen;

/// Judges the editors' texts ([`crate::Input`] as JSON) and answers with
/// [`crate::Output`] as JSON.
#[wasm_bindgen]
pub fn evaluate(input: &str) -> String {
    crate::evaluate_json(input)
}

/// The policies the page offers, as a JSON list of names.
#[wasm_bindgen]
pub fn policies() -> String {
    serde_json::to_string(crate::policies::NAMES).unwrap_or_else(|_| "[]".to_owned())
}
