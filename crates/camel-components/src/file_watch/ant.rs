//! Ant-style path patterns, as Camel's `antInclude` reads them: `**` matches any number
//! of folders, `*` any run of characters within one name, `?` one character.

use camel_api::suggest::wildcard_match;

/// A compiled pattern: its `/`-separated segments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct AntPattern {
    segments: Vec<String>,
}

impl AntPattern {
    pub(super) fn new(pattern: &str) -> Self {
        AntPattern {
            segments: pattern
                .split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        }
    }

    /// Whether the `/`-separated relative `path` matches. Dynamic programming over
    /// (pattern segment, path segment), so no pattern takes more than their product.
    pub(super) fn matches(&self, path: &str) -> bool {
        let names: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (p, n) = (self.segments.len(), names.len());
        // done[i][j]: pattern segments i.. match names j..
        let mut done = vec![vec![false; n + 1]; p + 1];
        done[p][n] = true;
        for i in (0..p).rev() {
            for j in (0..=n).rev() {
                done[i][j] = if self.segments[i] == "**" {
                    done[i + 1][j] || (j < n && done[i][j + 1])
                } else {
                    j < n && wildcard_match(&self.segments[i], names[j]) && done[i + 1][j + 1]
                };
            }
        }
        done[0][0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ant_patterns() {
        let m = |pattern: &str, path: &str| AntPattern::new(pattern).matches(path);
        assert!(m("**", "a.txt"));
        assert!(m("**", "x/y/a.txt"));
        assert!(m("*.txt", "a.txt"));
        assert!(!m("*.txt", "x/a.txt"));
        assert!(m("**/*.txt", "a.txt"));
        assert!(m("**/*.txt", "x/y/a.txt"));
        assert!(!m("**/*.txt", "x/y/a.csv"));
        assert!(m("x/**/?.txt", "x/a.txt"));
        assert!(m("x/**/?.txt", "x/1/2/a.txt"));
        assert!(!m("x/**/?.txt", "y/a.txt"));
        assert!(!m("x/**/?.txt", "x/ab.txt"));
        // A pathological pattern stays quick.
        let long = "**/".repeat(40) + "z";
        assert!(!m(&long, &"a/".repeat(200)));
    }
}
