//! `rule-tables`: the words of each policy's README that follow from its
//! rules, written or checked.

mod docs;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use linked::{Linked, Visitor};
use shared::Catalogue;

use crate::generated::Generated;
use docs::RuleDoc;

/// Write each policy README's "Rules" table, and the rules its setting
/// `deny` may list, from the rules: their catalogue (`RULES`: ids, order,
/// verdicts) and each rule's doc comment (what it checks, the source it
/// follows). Adding a rule is its constant, its check and its case; this
/// writes the rest.
#[derive(clap::Args)]
pub struct Args {
    /// Write nothing; exit 1 when a committed README differs.
    #[arg(long)]
    pub check: bool,
}

pub fn run(root: &Path, Args { check }: Args) -> Result<ExitCode> {
    generate(root)?.commit(root, check)
}

/// Where the rules every policy shares are declared.
const SHARED_RULES: &str = "shared/src/rule.rs";

/// The marks around the words this task writes, in a README.
const TABLE: (&str, &str) = (
    "<!-- rules: written by `cargo xtask rule-tables` (make rule-tables) from the rules' catalogue and doc comments in src/rules.rs; edit those -->",
    "<!-- end of rules -->",
);
const RAISABLE: (&str, &str) = ("<!-- raisable -->", "<!-- end of raisable -->");

/// Every policy's catalogue, in name order ([`linked`]).
struct Catalogues;

impl Visitor for Catalogues {
    type Output = Catalogue;

    fn visit<S: linked::Settings>(&mut self, policy: Linked<S>) -> Catalogue {
        policy.rules
    }
}

/// Every policy's README with its generated parts rewritten.
pub fn generate(root: &Path) -> Result<Generated> {
    let shared = docs::read(&root.join(SHARED_RULES))?;
    let mut files = Vec::new();
    for catalogue in linked::visit_all(&mut Catalogues) {
        let dir = Path::new(layout::POLICIES).join(catalogue.policy);
        let mut docs = docs::read(&root.join(&dir).join("src/rules.rs"))?;
        docs.extend(shared.clone());
        let path = dir.join("README.md");
        let readme = std::fs::read_to_string(root.join(&path))
            .with_context(|| format!("reading {}", path.display()))?;
        let readme = rewrite(&readme, &catalogue, &docs)
            .with_context(|| format!("writing {}", path.display()))?;
        files.push((path, readme));
    }
    Ok(Generated {
        files,
        removed: Vec::<PathBuf>::new(),
    })
}

/// `readme` with its rules table and its list of raisable rules written
/// from `catalogue` and the rules' `docs`.
fn rewrite(readme: &str, catalogue: &Catalogue, docs: &BTreeMap<String, RuleDoc>) -> Result<String> {
    let readme = between(readme, TABLE, &table(catalogue, docs)?)?;
    let raisable = catalogue.raisable();
    match (raisable.is_empty(), readme.contains(RAISABLE.0)) {
        (true, false) => Ok(readme),
        (true, true) => bail!(
            "no rule of {} is raisable, but the README lists them ({})",
            catalogue.policy,
            RAISABLE.0
        ),
        (false, false) => bail!(
            "the setting `deny` may list {raisable:?}: its row of the Settings table lists them \
             between {} and {}",
            RAISABLE.0,
            RAISABLE.1
        ),
        (false, true) => between(&readme, RAISABLE, &code_list(&raisable)),
    }
}

/// `text` with what stands between `marks` replaced by `inner`.
fn between(text: &str, (open, close): (&str, &str), inner: &str) -> Result<String> {
    let (before, rest) = text
        .split_once(open)
        .with_context(|| format!("{open} is missing"))?;
    let (_, after) = rest
        .split_once(close)
        .with_context(|| format!("{close} is missing after {open}"))?;
    if after.contains(open) {
        bail!("{open} appears twice");
    }
    Ok(format!("{before}{open}{inner}{close}{after}"))
}

/// `a`, `b`, `c`: ids as code.
fn code_list(ids: &[&str]) -> String {
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The "Rules" section's words below its heading: how findings name their
/// rule, and a row per rule, in catalogue order.
fn table(catalogue: &Catalogue, docs: &BTreeMap<String, RuleDoc>) -> Result<String> {
    let policy = catalogue.policy;
    let mut out = format!(
        "\nEvery rejection line and warning starts with its rule's tag, `[{policy}/<rule>]`, then the\n\
         field path, so reports that keep only the message still name the rule\n\
         (`README.md#rule-<rule>` links here).\n\n\
         | Rule | Verdict | What it checks | Source it follows |\n\
         |---|---|---|---|\n"
    );
    for rule in catalogue.rules() {
        let doc = docs.get(rule.id).with_context(|| {
            format!(
                "rule {}: no doc comment declares it (src/rules.rs, or {SHARED_RULES})",
                rule.tag()
            )
        })?;
        let cell = |text: &str| text.replace('|', "\\|");
        out.push_str(&format!(
            "| <a id=\"rule-{id}\"></a>`{id}` | {level} | {checks} | {source} |\n",
            id = rule.id,
            level = rule.level.describe(),
            checks = cell(&doc.checks),
            source = cell(&doc.source),
        ));
    }
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::{Level, Rule};

    const OWN: Rule = Rule {
        policy: "p",
        id: "own",
        level: Level::Setting,
    };
    const CATALOGUE: Catalogue = Catalogue {
        policy: "p",
        own: &[OWN],
    };

    fn docs() -> BTreeMap<String, RuleDoc> {
        let mut docs = docs::parse(&std::fs::read_to_string(layout::checkout().join(SHARED_RULES)).unwrap())
            .unwrap();
        docs.insert(
            "own".into(),
            RuleDoc {
                checks: "A | B".into(),
                source: "`x.yaml`".into(),
            },
        );
        docs
    }

    #[test]
    fn committed_readmes_are_what_the_rules_give() {
        let root = layout::checkout();
        let drift = generate(&root).unwrap().drift(&root);
        assert!(
            drift.is_empty(),
            "{drift:?} differ from what the rules give: run `make rule-tables` and commit"
        );
    }

    #[test]
    fn the_table_and_the_raisable_rules_are_written_between_their_marks() {
        let readme = format!(
            "# p\n\n## Rules\n{}\nold\n{}\n\n| `deny` | any of {}x{} |\n",
            TABLE.0, TABLE.1, RAISABLE.0, RAISABLE.1
        );
        let written = rewrite(&readme, &CATALOGUE, &docs()).unwrap();
        assert!(
            written.contains(
                "| <a id=\"rule-own\"></a>`own` | warn (deny by setting) | A \\| B | `x.yaml` |\n\
                 | <a id=\"rule-malformed-request\"></a>`malformed-request` | deny |"
            ),
            "{written}"
        );
        assert!(!written.contains("old"), "{written}");
        assert!(
            written.ends_with(&format!("| `deny` | any of {}`own`{} |\n", RAISABLE.0, RAISABLE.1)),
            "{written}"
        );
        assert_eq!(rewrite(&written, &CATALOGUE, &docs()).unwrap(), written);
    }

    #[test]
    fn a_readme_without_its_marks_or_a_rule_without_words_is_refused() {
        let unmarked = format!("{}\n{}\n", TABLE.0, TABLE.1);
        let error = rewrite(&unmarked, &CATALOGUE, &docs()).unwrap_err().to_string();
        assert!(error.starts_with("the setting `deny` may list [\"own\"]"), "{error}");
        let error = rewrite("# p\n", &CATALOGUE, &docs()).unwrap_err().to_string();
        assert!(error.contains("is missing"), "{error}");
        let mut undocumented = docs();
        undocumented.remove("own");
        let error = rewrite(&unmarked, &CATALOGUE, &undocumented)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "rule p/own: no doc comment declares it (src/rules.rs, or shared/src/rule.rs)"
        );
    }
}
