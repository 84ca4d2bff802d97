//! The subcommands, each a folder with its arguments (`Args`, whose doc
//! comment is its help) and its `run`; this list is the one place a
//! subcommand is added. What several of them share lives beside this
//! folder, in modules named for what they hold (`bundle`, `manifests`,
//! `finding`, `checklist`, `oci`, `installation`).
//!
//! These are what users run; the team's own tasks (building dist/, the
//! benchmarks, the generated files) are `cargo xtask` (xtask/).

use subcommands::commands;

commands! {
    check,
    preflight,
    snapshot_command,
    wiring,
    report,
    push,
}
