//! Scenario files embedded in Markdown documentation: the doc test and the fuzzer's seed corpus
//! both take docs/scenario.md's examples from here.

/// The bodies of the fenced code blocks whose info string is exactly `toml`, in order.
pub fn toml_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        let fence = line.trim_start().starts_with("```");
        match (current.as_mut(), fence) {
            (None, true) if line.trim() == "```toml" => current = Some(String::new()),
            (Some(body), true) => {
                blocks.push(std::mem::take(body));
                current = None;
            }
            (Some(body), false) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_toml_blocks_are_taken() {
        let md =
            "text\n```toml\na = 1\n```\n```rust\nfn f() {}\n```\n  ```toml\nb = 2\nc = 3\n  ```\n";
        assert_eq!(toml_blocks(md), ["a = 1\n", "b = 2\nc = 3\n"]);
        assert!(toml_blocks("```toml\nunterminated").is_empty());
    }
}
