//! Every case in `tests/cases/` against the rule function, natively.

fn main() {
    testkit::native::main::<securitygroup_validity::Settings>(
        env!("CARGO_MANIFEST_DIR"),
        securitygroup_validity::RULES,
        securitygroup_validity::READS,
        securitygroup_validity::evaluate,
    );
}
