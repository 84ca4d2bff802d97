//! Writes wasm-bindgen's JavaScript glue for the playground module, as
//! `wasm-bindgen --target web --no-typescript` does: the library behind that
//! command, at the version of the wasm-bindgen crate the module is built
//! with, so there is no separate CLI to install and keep in step.
//!
//! Usage: cozystack-bindgen INPUT.wasm OUT_DIR (tools/build-playground runs
//! it).

use std::process::ExitCode;

use wasm_bindgen_cli_support::Bindgen;

/// The name of the JavaScript module and of the wasm file beside it, which
/// the page imports.
const OUT_NAME: &str = "cozystack_playground";

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(input), Some(out_dir), None) = (args.next(), args.next(), args.next()) else {
        eprintln!("usage: cozystack-bindgen INPUT.wasm OUT_DIR");
        return ExitCode::from(2);
    };
    let mut bindgen = Bindgen::new();
    let generated = bindgen
        .input_path(&input)
        .out_name(OUT_NAME)
        .typescript(false)
        // As the command does by default: `init()` loads the module from
        // beside the glue, which is how the page starts it.
        .omit_default_module_path(false)
        .web(true)
        .and_then(|bindgen| bindgen.generate(&out_dir));
    match generated {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cozystack-bindgen: {}: {error:#}", input.to_string_lossy());
            ExitCode::FAILURE
        }
    }
}
