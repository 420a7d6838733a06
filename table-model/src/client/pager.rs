//! Queries as streams that follow continuations by themselves (`docs/rules.md` §10): [`QueryPager`] yields
//! entities, [`QueryPages`] whole pages, [`RawPages`] pages not decoded, [`TablePager`] table names. Each says where it stands, as a
//! continuation whose `Display` form is a token to resume from later.

use super::error::Error;
use super::location::Location;
use crate::name::TableName;
use crate::response::{Continuation, QueryPage, RawPage, TableContinuation, TablesPage};
use azure_core::Bytes;
use futures::Stream;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A page, and the location of the account that served it.
pub(crate) type PageFuture<P> = Pin<Box<dyn Future<Output = Result<(P, Location), Error>> + Send>>;
pub(crate) type Fetch<P, C> = Box<dyn Fn(Option<C>) -> PageFuture<P> + Send + Sync>;

enum State<P> {
    /// The next page is not asked for yet.
    Idle,
    Fetching(PageFuture<P>),
    /// The last page was read, or a page failed.
    Ended,
}

/// Fetches pages one after the other, each from the continuation of the one before, until a page has none.
struct PageLoop<P, C> {
    fetch: Fetch<P, C>,
    next_of: fn(&P) -> Option<C>,
    /// Where the next page starts (`None`: at the start, before the first page; after the last, nowhere).
    next: Option<C>,
    state: State<P>,
    /// Where the last page read was served; `None` before the first.
    location: Option<Location>,
}

impl<P, C: Clone> PageLoop<P, C> {
    fn new(fetch: Fetch<P, C>, next_of: fn(&P) -> Option<C>, start: Option<C>) -> Self {
        PageLoop { fetch, next_of, next: start, state: State::Idle, location: None }
    }

    fn poll_page(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<P, Error>>> {
        loop {
            match &mut self.state {
                State::Ended => return Poll::Ready(None),
                State::Idle => self.state = State::Fetching((self.fetch)(self.next.clone())),
                State::Fetching(page) => {
                    let result = std::task::ready!(page.as_mut().poll(cx)).map(|(page, location)| {
                        self.location = Some(location);
                        page
                    });
                    match &result {
                        // A page may be empty and still continue: only a page without one ends the query.
                        Ok(page) => {
                            self.next = (self.next_of)(page);
                            self.state = if self.next.is_some() { State::Idle } else { State::Ended };
                        }
                        // The stream ends; `next` still says where the failed page starts, to resume from.
                        Err(_) => self.state = State::Ended,
                    }
                    return Poll::Ready(Some(result));
                }
            }
        }
    }
}

/// Yields the items of the pages of a [`PageLoop`], one by one.
struct Items<T, P, C> {
    pages: PageLoop<P, C>,
    items_of: fn(P) -> Vec<T>,
    current: std::vec::IntoIter<T>,
    /// The continuation the current page was fetched with.
    current_from: Option<C>,
}

impl<T, P, C: Clone> Items<T, P, C> {
    fn new(fetch: Fetch<P, C>, next_of: fn(&P) -> Option<C>, items_of: fn(P) -> Vec<T>, start: Option<C>) -> Self {
        Items {
            pages: PageLoop::new(fetch, next_of, start.clone()),
            items_of,
            current: Vec::new().into_iter(),
            current_from: start,
        }
    }

    /// The start of the current page while some of its items are not yet yielded, else the next page's.
    fn continuation(&self) -> Option<&C> {
        if self.current.len() > 0 {
            self.current_from.as_ref()
        } else {
            self.pages.next.as_ref()
        }
    }

    /// The pages, from the start of the current page.
    fn into_pages(self) -> PageLoop<P, C> {
        let mut pages = self.pages;
        if self.current.len() > 0 {
            pages.next = self.current_from;
            pages.state = State::Idle;
        }
        pages
    }

    fn poll_item(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, Error>>> {
        loop {
            if let Some(item) = self.current.next() {
                return Poll::Ready(Some(Ok(item)));
            }
            let from = self.pages.next.clone();
            match std::task::ready!(self.pages.poll_page(cx)) {
                Some(Ok(page)) => {
                    self.current = (self.items_of)(page).into_iter();
                    self.current_from = from;
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => return Poll::Ready(None),
            }
        }
    }
}

/// The entities of a query, page after page: a [`Stream`] of `Result<T, Error>` that follows the service's
/// continuations by itself, including across pages that are empty but continue.
///
/// Made by [`TableClient::query`](super::TableClient::query). Consume it with `futures`' `StreamExt` /
/// `TryStreamExt` (`try_next`, `try_collect`, `take`); [`into_pages`](QueryPager::into_pages) gives whole pages
/// instead, and [`continuation`](QueryPager::continuation) where to resume later.
pub struct QueryPager<T> {
    items: Items<T, QueryPage<T>, Continuation>,
}

// No field is pinned: the futures are boxed, and the entities are moved out, never pinned.
impl<T> Unpin for QueryPager<T> {}

impl<T> QueryPager<T> {
    pub(crate) fn new(fetch: Fetch<QueryPage<T>, Continuation>, start: Option<Continuation>) -> Self {
        let items = Items::new(fetch, |page| page.continuation.clone(), |page| page.entities, start);
        QueryPager { items }
    }

    /// Where to resume this query in another pager (pass it as
    /// [`QueryOptions::continuation`](super::QueryOptions::continuation)) so that no entity is skipped: the
    /// start of the current page while some of its entities are not yet yielded (they are yielded again), the
    /// start of the next page otherwise; `None` at the very start, and once the last page is read. After an
    /// error, the start of the page that failed.
    pub fn continuation(&self) -> Option<&Continuation> {
        self.items.continuation()
    }

    /// Which location of the account served the last page read: [`Location::Secondary`] may lag the primary
    /// (see [`LocationMode`](super::LocationMode)); `None` before the first page.
    pub fn location(&self) -> Option<Location> {
        self.items.pages.location
    }

    /// The pages instead of the entities, from the start of the current page.
    pub fn into_pages(self) -> QueryPages<T> {
        QueryPages { pages: self.items.into_pages() }
    }
}

impl<T> Stream for QueryPager<T> {
    type Item = Result<T, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().items.poll_item(cx)
    }
}

impl<T> fmt::Debug for QueryPager<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueryPager").field("continuation", &self.continuation()).finish_non_exhaustive()
    }
}

/// The pages of a query: a [`Stream`] of `Result<QueryPage<T>, Error>`, each page with the continuation of the
/// next. Pages may be empty (the service ends a page after 5 seconds or at a partition boundary).
pub struct QueryPages<T> {
    pages: PageLoop<QueryPage<T>, Continuation>,
}

impl<T> Unpin for QueryPages<T> {}

impl<T> QueryPages<T> {
    /// Where the next page starts: a token to resume from exactly after the pages yielded so far; `None` at
    /// the start and after the last page. After an error, the start of the page that failed.
    pub fn continuation(&self) -> Option<&Continuation> {
        self.pages.next.as_ref()
    }

    /// Which location served the last page, as [`QueryPager::location`].
    pub fn location(&self) -> Option<Location> {
        self.pages.location
    }
}

impl<T> Stream for QueryPages<T> {
    type Item = Result<QueryPage<T>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().pages.poll_page(cx)
    }
}

impl<T> fmt::Debug for QueryPages<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueryPages").field("continuation", &self.continuation()).finish_non_exhaustive()
    }
}

/// The pages of a query as the service sent them, not decoded: a [`Stream`] of `Result<RawPage<Bytes>, Error>`,
/// each with the continuation of the next, made by [`TableClient::query_raw`](super::TableClient::query_raw);
/// or with each body read by a function of the caller's (`RawPages<B>`, made by
/// [`TableClient::query_read`](super::TableClient::query_read)). Pages may be empty (the service ends a page
/// after 5 seconds or at a partition boundary).
pub struct RawPages<B = Bytes> {
    pages: PageLoop<RawPage<B>, Continuation>,
}

impl<B> Unpin for RawPages<B> {}

impl<B> RawPages<B> {
    pub(crate) fn new(fetch: Fetch<RawPage<B>, Continuation>, start: Option<Continuation>) -> Self {
        RawPages { pages: PageLoop::new(fetch, |page| page.continuation.clone(), start) }
    }

    /// Where the next page starts, as [`QueryPages::continuation`].
    pub fn continuation(&self) -> Option<&Continuation> {
        self.pages.next.as_ref()
    }

    /// Which location served the last page, as [`QueryPager::location`].
    pub fn location(&self) -> Option<Location> {
        self.pages.location
    }
}

impl<B> Stream for RawPages<B> {
    type Item = Result<RawPage<B>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().pages.poll_page(cx)
    }
}

impl<B> fmt::Debug for RawPages<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawPages").field("continuation", &self.continuation()).finish_non_exhaustive()
    }
}

/// The tables of a listing, page after page: a [`Stream`] of `Result<TableName, Error>`, made by
/// [`TableServiceClient::list_tables`](super::TableServiceClient::list_tables).
pub struct TablePager {
    items: Items<TableName, TablesPage, TableContinuation>,
}

impl TablePager {
    pub(crate) fn new(fetch: Fetch<TablesPage, TableContinuation>, start: Option<TableContinuation>) -> Self {
        TablePager { items: Items::new(fetch, |page| page.continuation.clone(), |page| page.tables, start) }
    }

    /// Where to resume this listing, as [`QueryPager::continuation`] says.
    pub fn continuation(&self) -> Option<&TableContinuation> {
        self.items.continuation()
    }

    /// Which location served the last page, as [`QueryPager::location`].
    pub fn location(&self) -> Option<Location> {
        self.items.pages.location
    }
}

impl Stream for TablePager {
    type Item = Result<TableName, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().items.poll_item(cx)
    }
}

impl fmt::Debug for TablePager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TablePager").field("continuation", &self.continuation()).finish_non_exhaustive()
    }
}
