//! The tasks, each a folder with its arguments (`Args`, whose doc comment is
//! its help) and its `run`; this list is the one place a task is added.

use subcommands::commands;

commands! {
    dist,
    bench,
    bench_server,
    bench_preflight,
    artifacthub,
    chart,
    import_release,
    rule_tables,
    scaffold_deploy,
    case_files,
    run,
}
