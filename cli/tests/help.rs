//! `cozystack-policies --help` lists what a user runs, and nothing else:
//! the team's tasks are `cargo xtask`'s (xtask/), not in this binary.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

#[test]
fn help_lists_the_user_commands_and_only_them() {
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
            "wiring",
            "report",
            "push",
            "help"
        ],
        "{help}"
    );
    // The team's tasks are xtask's folders (xtask/tests/commands.rs).
    let tasks = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../xtask/src/commands");
    let mut checked = 0;
    for entry in std::fs::read_dir(tasks).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let task = path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .replace('_', "-");
        let task = task.as_str();
        checked += 1;
        let output = common::command(&[task, "--help"]).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{task} is a task of xtask");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("unrecognized subcommand"),
            "{task}: {stderr}"
        );
    }
    assert!(checked > 3, "no task folders read");
}
