//! Every case in `tests/cases/` against the rule function, natively.

fn main() {
    testkit::native::main::<storageclass_immutable::Settings>(
        env!("CARGO_MANIFEST_DIR"),
        storageclass_immutable::RULES,
        storageclass_immutable::READS,
        storageclass_immutable::evaluate,
    );
}
