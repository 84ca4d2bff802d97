//! `cozystack-policies --help` lists what a user runs; the team's commands
//! are hidden from it and still run.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

#[test]
fn help_lists_the_user_commands_and_hides_the_team_ones() {
    let output = common::command(&["--help"]).output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("Options:").next())
        .unwrap_or_else(|| panic!("no command list in {help}"))
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(
        commands,
        [
            "check",
            "preflight",
            "snapshot-command",
            "report",
            "push",
            "help"
        ],
        "{help}"
    );
    for hidden in [
        "dist",
        "bench",
        "bench-server",
        "artifacthub",
        "chart",
        "case-files",
        "run",
    ] {
        let output = common::command(&[hidden, "--help"]).output().unwrap();
        assert!(output.status.success(), "{hidden} --help");
    }
}
