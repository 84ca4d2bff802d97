//! What a rule's doc comment says, read with `syn` from the file that
//! declares it: the rule's `Rule` value (a `const` of a policy's
//! `rules.rs`, or a constructor of `shared`'s for the rules every policy
//! has) carries its id, and its doc comment, paragraph by paragraph, a
//! title, what the rule checks, and `Source: ` the platform source it
//! follows. The words live there once; the README tables are made of them.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// The words of one rule's doc comment a README row shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDoc {
    /// The second paragraph: what the rule checks.
    pub checks: String,
    /// The paragraph after `Source: `: what it follows.
    pub source: String,
}

/// Every rule declared in the file at `path`, by id.
pub fn read(path: &Path) -> Result<BTreeMap<String, RuleDoc>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse(&text).with_context(|| format!("reading the rules of {}", path.display()))
}

/// The rules declared in `text` (a Rust file), by id.
pub fn parse(text: &str) -> Result<BTreeMap<String, RuleDoc>> {
    let file = syn::parse_file(text)?;
    let mut found = BTreeMap::new();
    let mut declare = |attrs: &[syn::Attribute], value: Option<&syn::Expr>| -> Result<()> {
        let Some(id) = value.and_then(rule_id) else {
            return Ok(());
        };
        let doc = rule_doc(attrs).with_context(|| format!("rule {id}"))?;
        found.insert(id, doc);
        Ok(())
    };
    for item in &file.items {
        match item {
            syn::Item::Const(constant) => declare(&constant.attrs, Some(&constant.expr))?,
            syn::Item::Impl(block) => {
                for item in &block.items {
                    if let syn::ImplItem::Fn(function) = item {
                        let value = match function.block.stmts.last() {
                            Some(syn::Stmt::Expr(expr, None)) => Some(expr),
                            _ => None,
                        };
                        declare(&function.attrs, value)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(found)
}

/// The id of a `Rule { id: "...", .. }` expression.
fn rule_id(expr: &syn::Expr) -> Option<String> {
    let syn::Expr::Struct(value) = expr else {
        return None;
    };
    if value.path.segments.last()?.ident != "Rule" {
        return None;
    }
    value.fields.iter().find_map(|field| match (&field.member, &field.expr) {
        (
            syn::Member::Named(name),
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(id),
                ..
            }),
        ) if name == "id" => Some(id.value()),
        _ => None,
    })
}

/// The doc comment's paragraphs, each on one line.
fn paragraphs(attrs: &[syn::Attribute]) -> Vec<String> {
    let lines = attrs.iter().filter_map(|attr| match &attr.meta {
        syn::Meta::NameValue(doc) if doc.path.is_ident("doc") => match &doc.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(line),
                ..
            }) => Some(line.value()),
            _ => None,
        },
        _ => None,
    });
    let mut paragraphs = vec![String::new()];
    for line in lines {
        let line = line.trim();
        match paragraphs.last_mut() {
            Some(last) if line.is_empty() && !last.is_empty() => paragraphs.push(String::new()),
            Some(_) if line.is_empty() => {}
            Some(last) => {
                if !last.is_empty() {
                    last.push(' ');
                }
                last.push_str(line);
            }
            None => {}
        }
    }
    paragraphs.retain(|p| !p.is_empty());
    paragraphs
}

/// What a README row shows of a rule's doc comment.
fn rule_doc(attrs: &[syn::Attribute]) -> Result<RuleDoc> {
    let paragraphs = paragraphs(attrs);
    let Some(checks) = paragraphs.get(1).filter(|p| !p.starts_with("Source: ")) else {
        bail!(
            "its doc comment needs a title, then a paragraph saying what the rule checks, then \
             `Source: ` and what it follows"
        );
    };
    let Some(source) = paragraphs.iter().find_map(|p| p.strip_prefix("Source: ")) else {
        bail!("its doc comment has no paragraph `Source: ` saying what the rule follows");
    };
    let sentence = |text: &str| text.strip_suffix('.').unwrap_or(text).to_owned();
    Ok(RuleDoc {
        checks: sentence(checks),
        source: sentence(source),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_its_id_and_its_doc_comments_paragraphs() {
        let text = r#"
            /// `x`.
            ///
            /// UPDATE of a thing
            /// that is wrong.
            ///
            /// Source: `a.yaml`,
            /// `b.yaml`.
            pub const X: Rule = Rule { policy: POLICY, id: "x", level: Level::Deny };
            /// Not a rule.
            pub const RULES: Catalogue = Catalogue { policy: POLICY, own: &[X] };
            impl Rule {
                /// The rule for y.
                ///
                /// Y is missing.
                ///
                /// Source: the API.
                pub const fn y(policy: &'static str) -> Rule {
                    Rule { policy, id: "y", level: Level::Warn }
                }
            }
        "#;
        let docs = parse(text).unwrap();
        assert_eq!(
            docs["x"],
            RuleDoc {
                checks: "UPDATE of a thing that is wrong".into(),
                source: "`a.yaml`, `b.yaml`".into(),
            }
        );
        assert_eq!(docs["y"].checks, "Y is missing");
        assert_eq!(docs.len(), 2);
    }

    #[test]
    fn a_rule_without_its_words_is_refused() {
        let untold = r#"
            /// `x`.
            ///
            /// Source: `a.yaml`.
            pub const X: Rule = Rule { policy: POLICY, id: "x", level: Level::Deny };
        "#;
        let error = format!("{:#}", parse(untold).unwrap_err());
        assert!(error.starts_with("rule x: its doc comment needs"), "{error}");
        let unsourced = r#"
            /// `x`.
            ///
            /// What it checks.
            pub const X: Rule = Rule { policy: POLICY, id: "x", level: Level::Deny };
        "#;
        let error = format!("{:#}", parse(unsourced).unwrap_err());
        assert!(error.contains("no paragraph `Source: `"), "{error}");
    }
}
