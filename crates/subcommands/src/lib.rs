//! One folder a subcommand, for both programs (`cozystack-policies`, what
//! users run, and `xtask`, the team's tasks).
//!
//! A subcommand is a folder `src/commands/<name>/` whose `mod.rs` holds
//! `Args` (a `clap::Args` whose doc comment is its help) and
//! `pub fn run(root: &Path, args: Args) -> anyhow::Result<ExitCode>`.
//! [`commands!`], invoked once in `src/commands/mod.rs` with every name,
//! declares each folder's module, the clap subcommand (`snapshot_command`
//! is `snapshot-command`) and the dispatch, so adding one is its folder and
//! its name in that list. The invoking crate depends on `clap` and
//! `anyhow`, as both programs do.

/// Declares the modules `$name`, the `Command` enum clap parses (one
/// variant per name, in `--help`'s order) and `Command::run`.
#[macro_export]
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
