//! The documentation holds together: every relative link in the README,
//! ARCHITECTURE.md, BENCHMARKS.md, FUZZING.md and `docs/` leads to a file
//! that exists (and to a heading of it, when it names one), every page of
//! `docs/` is linked from the README, and the plugin reference has a section
//! for every registered plugin type.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use flotilla_plugins::registry;

/// The pages checked, relative to the workspace root.
fn pages() -> Vec<PathBuf> {
    let root = common::root();
    let mut pages: Vec<PathBuf> =
        ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md", "FUZZING.md"].iter().map(PathBuf::from).collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| path.strip_prefix(&root).unwrap().to_path_buf())
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The targets of a page's Markdown links and images, outside code blocks
/// and code spans.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // Code spans may hold `[x](y)`-looking text; leave them out.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as
/// hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings.
fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut in_fence = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('#') {
            out.insert(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_relative_link_leads_to_a_file_and_heading_that_exist() {
    let root = common::root();
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(root.join(&page)).unwrap();
        let dir = root.join(&page).parent().unwrap().to_path_buf();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, heading) = match target.split_once('#') {
                Some((file, heading)) => (file, Some(heading)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() { root.join(&page) } else { dir.join(file) };
            if !path.exists() {
                broken.push(format!("{}: {target}: no such file", page.display()));
                continue;
            }
            if let Some(heading) = heading {
                if path.extension().is_some_and(|e| e == "md") && !anchors(&path).contains(heading) {
                    broken.push(format!("{}: {target}: no such heading", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_of_docs_is_linked_from_the_readme() {
    let root = common::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let linked: BTreeSet<String> = link_targets(&readme).into_iter().collect();
    for page in pages().into_iter().filter(|p| p.starts_with("docs")) {
        let name = page.to_string_lossy().into_owned();
        assert!(linked.contains(&name), "README.md does not link {name}");
    }
}

#[test]
fn every_registered_plugin_type_has_its_section_in_the_plugin_reference() {
    let reference = common::root().join("docs/plugins.md");
    let text = std::fs::read_to_string(&reference).unwrap();
    let sections: BTreeSet<&str> = text.lines().filter_map(|line| line.strip_prefix("## ")).collect();
    for plugin_type in registry::REGISTRY {
        assert!(
            sections.contains(plugin_type.name),
            "docs/plugins.md has no \"## {}\" section (every registered type is documented there)",
            plugin_type.name
        );
    }
}

#[test]
fn anchors_follow_github_s_rule() {
    assert_eq!(anchor(" AMRISim's Pioneer robots"), "amrisims-pioneer-robots");
    assert_eq!(anchor("Time, lockstep and determinism"), "time-lockstep-and-determinism");
    assert_eq!(link_targets("see [a](b.md#c) and `[x](y)`"), ["b.md#c"]);
}
