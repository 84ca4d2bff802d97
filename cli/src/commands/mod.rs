//! The subcommands, each a folder with its arguments (`Args`, whose doc
//! comment is its help) and its `run`; this list is the one place a
//! subcommand is added. What several of them share lives beside this
//! folder, in modules named for what they hold (`bundle`, `manifests`,
//! `finding`, `checklist`, `oci`).
//!
//! These are what users run; the team's own tasks (building dist/, the
//! benchmarks, the generated files) are `cargo xtask` (xtask/).

macro_rules! commands {
    ($($name:ident),* $(,)?) => {
        $(pub mod $name;)*

        /// Every subcommand, in the order `--help` lists them.
        #[derive(clap::Subcommand)]
        #[allow(non_camel_case_types)] // the folder's name is the command's
        pub enum Command {
            $($name($name::Args),)*
        }

        impl Command {
            /// Runs the subcommand, paths taken under `root`.
            pub fn run(self, root: &std::path::Path) -> anyhow::Result<std::process::ExitCode> {
                match self {
                    $(Command::$name(args) => $name::run(root, args),)*
                }
            }
        }
    };
}

commands! {
    check,
    preflight,
    snapshot_command,
    report,
    push,
}
