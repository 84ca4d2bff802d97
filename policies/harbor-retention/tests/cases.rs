//! Every case in `tests/cases/` against the rule function, natively.

fn main() {
    testkit::native::main::<harbor_retention::Settings>(
        env!("CARGO_MANIFEST_DIR"),
        harbor_retention::RULES,
        harbor_retention::READS,
        harbor_retention::evaluate,
    );
}
