//! Finding the focused text object of one application: depth-first from the app's root over
//! the children worth walking (`rules::to_descend`), stopping at the first child with the
//! FOCUSED state; each level's children are asked their state and role at once. Bounded by a
//! node count and a deadline.

use std::time::Instant;

use super::bus::{A11y, Node, TEXT};
use super::rules::{focused_child, role, to_descend, States};

/// How far a walk may go.
pub(super) struct Budget {
    pub deadline: Instant,
    pub nodes_left: u32,
    /// Nodes whose state was read, over every walk with this budget.
    pub visited: u32,
}

impl Budget {
    fn spent(&self) -> Option<&'static str> {
        if self.nodes_left == 0 {
            Some("node")
        } else if Instant::now() >= self.deadline {
            Some("time")
        } else {
            None
        }
    }

    fn take(&mut self, n: usize) {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        self.visited = self.visited.saturating_add(n);
        self.nodes_left = self.nodes_left.saturating_sub(n);
    }
}

/// The focused object that offers text.
pub(super) struct Focus {
    pub node: Node,
    pub role: u32,
    pub states: States,
    /// The object or one of its ancestors has the password role (an entry whose inner text
    /// widget has the focus).
    pub in_password: bool,
}

pub(super) enum Walk {
    Found(Focus),
    /// The focus is on an object without text (a button, a list) and nothing inside it has it.
    NoText,
    /// No object of the app has the focus (another app has it, or the toolkit does not say).
    NotFound,
    /// The node or time budget ran out ("node" or "time").
    Spent(&'static str),
}

/// Walks `app` (its root object) for the focused text object.
pub(super) async fn find_focus(a11y: &A11y, app: Node, budget: &mut Budget) -> Walk {
    // (node, the node or an ancestor has the password role)
    let mut stack = vec![(app, false)];
    let mut focus_without_text = false;
    while let Some((node, in_password)) = stack.pop() {
        if let Some(what) = budget.spent() {
            return Walk::Spent(what);
        }
        let kids = a11y.children(&node).await.unwrap_or_default();
        if kids.is_empty() {
            continue;
        }
        let kids = &kids[..kids.len().min(budget.nodes_left as usize)];
        budget.take(kids.len());
        let seen = a11y.seen_all(kids).await;
        if let Some(i) = focused_child(&seen) {
            let in_password = in_password || seen[i].role == role::PASSWORD_TEXT;
            let has_text = a11y
                .interfaces(&kids[i])
                .await
                .is_ok_and(|ifaces| ifaces.iter().any(|x| x == TEXT));
            if has_text {
                return Walk::Found(Focus {
                    node: kids[i].clone(),
                    role: seen[i].role,
                    states: seen[i].states,
                    in_password,
                });
            }
            // A focused container (a GTK entry around its text, a combo box): only its
            // inside can hold the focused text now.
            focus_without_text = true;
            stack.clear();
            stack.push((kids[i].clone(), in_password));
            continue;
        }
        for i in to_descend(&seen).into_iter().rev() {
            let in_password = in_password || seen[i].role == role::PASSWORD_TEXT;
            stack.push((kids[i].clone(), in_password));
        }
    }
    if focus_without_text {
        Walk::NoText
    } else {
        Walk::NotFound
    }
}
