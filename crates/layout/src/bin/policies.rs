//! Prints the policies of the repository, one per line with the release
//! profile its module is built with: `<name>\t<profile>`. The shell scripts
//! (tools/build-modules, release/*.sh, the Makefile) read it, so they find
//! the policies as every Rust tool does ([`layout::policies`]).
//!
//! ```sh
//! cargo run -q --locked -p cozystack-layout --bin policies [ROOT]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let listed = layout::policies(&root).and_then(|policies| {
        policies
            .iter()
            .map(|policy| Ok(format!("{}\t{}", policy.name, policy.manifest()?.profile)))
            .collect::<std::io::Result<Vec<_>>>()
    });
    match listed {
        Ok(lines) if lines.is_empty() => {
            eprintln!(
                "policies: no policy crates under {}",
                root.join(layout::POLICIES).display()
            );
            ExitCode::FAILURE
        }
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("policies: {error}");
            ExitCode::FAILURE
        }
    }
}
