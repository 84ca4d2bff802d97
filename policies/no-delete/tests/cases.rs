//! Every case in `tests/cases/` against the rule function, natively.

fn main() {
    testkit::native::main::<no_delete::Settings>(
        env!("CARGO_MANIFEST_DIR"),
        no_delete::RULES,
        no_delete::READS,
        no_delete::evaluate,
    );
}
