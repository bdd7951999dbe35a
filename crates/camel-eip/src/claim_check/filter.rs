//! What a claim check merges back: Camel's `filter` syntax.

use camel_api::Message;

/// Which parts of a stored message are merged back into the exchange.
///
/// Written as comma-separated rules: `body`, `headers`, `header:name` (`*` at the end
/// matches any name with that prefix). A rule prefixed `-` excludes, `+` (or nothing)
/// includes. With no include rule everything (body and all headers) is included before
/// the excludes apply; an exclude wins over an include.
///
/// ```
/// use camel_api::Message;
/// use camel_eip::claim_check::MergeFilter;
///
/// let filter = MergeFilter::parse("header:order*,-header:orderSecret").unwrap();
/// let mut current = Message::new("current");
/// let mut stored = Message::new("stored");
/// stored.headers.insert("orderId", "7");
/// stored.headers.insert("orderSecret", "s");
/// filter.merge(&mut current, stored);
/// assert_eq!(current.body, "current".into());
/// assert!(current.headers.contains("orderId") && !current.headers.contains("orderSecret"));
/// assert!(MergeFilter::parse("bodies").is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeFilter {
    include: Vec<Rule>,
    exclude: Vec<Rule>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Rule {
    Body,
    Headers,
    Header(String),
}

impl Rule {
    fn matches_header(&self, name: &str) -> bool {
        match self {
            Rule::Body => false,
            Rule::Headers => true,
            Rule::Header(pattern) => match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == pattern,
            },
        }
    }
}

impl MergeFilter {
    /// Parses Camel's filter text; the error names the rule not understood.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut filter = MergeFilter::default();
        for raw in text.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            let (exclude, rule) = match raw.as_bytes()[0] {
                b'-' => (true, &raw[1..]),
                b'+' => (false, &raw[1..]),
                _ => (false, raw),
            };
            let rule = match rule.trim() {
                "body" => Rule::Body,
                "headers" => Rule::Headers,
                r => match r.strip_prefix("header:") {
                    Some(name) if !name.trim().is_empty() => Rule::Header(name.trim().to_string()),
                    _ => {
                        return Err(format!(
                            "`{raw}` is not a claim check filter rule (use body, headers or header:name, optionally prefixed by + or -)"
                        ))
                    }
                },
            };
            if exclude {
                filter.exclude.push(rule);
            } else {
                filter.include.push(rule);
            }
        }
        Ok(filter)
    }

    fn included(&self, test: impl Fn(&Rule) -> bool) -> bool {
        let included = self.include.is_empty() || self.include.iter().any(&test);
        included && !self.exclude.iter().any(test)
    }

    /// Merges `stored` into `current` as the rules say.
    pub fn merge(&self, current: &mut Message, stored: Message) {
        if self.included(|r| *r == Rule::Body) {
            current.body = stored.body;
        }
        for (name, value) in stored.headers.iter() {
            if self.included(|r| r.matches_header(name)) {
                current.headers.insert(name, value.clone());
            }
        }
    }
}
