//! The tasks, each a folder with its arguments (`Args`, whose doc comment is
//! its help) and its `run`; this list is the one place a task is added.

macro_rules! commands {
    ($($name:ident),* $(,)?) => {
        $(pub mod $name;)*

        /// Every task.
        #[derive(clap::Subcommand)]
        #[allow(non_camel_case_types)] // the folder's name is the task's
        pub enum Command {
            $($name($name::Args),)*
        }

        impl Command {
            /// Runs the task, paths taken under `root`.
            pub fn run(self, root: &std::path::Path) -> anyhow::Result<std::process::ExitCode> {
                match self {
                    $(Command::$name(args) => $name::run(root, args),)*
                }
            }
        }
    };
}

commands! {
    dist,
    bench,
    bench_server,
    artifacthub,
    chart,
    scaffold_deploy,
    case_files,
    run,
}
