//! Every case in `tests/cases/` against the rule function, natively.

fn main() {
    testkit::native::main::<upgrade_gate::Settings>(
        env!("CARGO_MANIFEST_DIR"),
        upgrade_gate::RULES,
        upgrade_gate::READS,
        upgrade_gate::evaluate,
    );
}
