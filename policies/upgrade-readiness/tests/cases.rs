//! Every case in `tests/cases/` against the rule function, natively.

fn main() {
    testkit::native::main::<upgrade_readiness::Settings>(
        env!("CARGO_MANIFEST_DIR"),
        upgrade_readiness::RULES,
        upgrade_readiness::READS,
        upgrade_readiness::evaluate,
    );
}
