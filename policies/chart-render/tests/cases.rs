//! Every case in `tests/cases/` against the rule function, natively.

fn main() {
    testkit::native::main::<chart_render::Settings>(
        env!("CARGO_MANIFEST_DIR"),
        chart_render::RULES,
        chart_render::READS,
        chart_render::evaluate,
    );
}
