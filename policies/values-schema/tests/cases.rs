//! Every case in `tests/cases/` against the rule function, natively.

fn main() {
    testkit::native::main::<values_schema::Settings>(
        env!("CARGO_MANIFEST_DIR"),
        values_schema::RULES,
        values_schema::READS,
        values_schema::evaluate,
    );
}
