//! Every case in `tests/cases/` against the rule function, natively.

fn main() {
    testkit::native::main::<oidc_config::Settings>(
        env!("CARGO_MANIFEST_DIR"),
        oidc_config::RULES,
        oidc_config::READS,
        oidc_config::evaluate,
    );
}
