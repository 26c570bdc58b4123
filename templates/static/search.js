/* toolkit's search page: asks the Pagefind index built beside the site (no server), and
   lists the posts that match. Loaded only by the search page. */
(() => {
  "use strict";
  const form = document.querySelector(".search-form");
  if (!form) return;
  const input = form.querySelector("input");
  const status = document.getElementById("search-status");
  const list = document.getElementById("search-results");
  const index = new URL(form.dataset.index, location.href);
  const root = new URL("..", index);
  let pagefind = null;
  let latest = 0;

  // The index comes in parts (a changed post re-indexes only its part): the first is
  // Pagefind's bundle itself, parts.json lists the others, merged into it.
  async function load() {
    const listing = await fetch(new URL("parts.json", index), { cache: "no-cache" });
    if (!listing.ok) throw new Error(`parts.json: ${listing.status}`);
    const { parts } = await listing.json();
    if (!Array.isArray(parts) || !parts.every((part) => /^part-\d+\/$/.test(part))) {
      throw new Error("parts.json: not a list of parts");
    }
    const module = await import(new URL("pagefind.js", index).href);
    await module.options({ baseUrl: root.pathname });
    await module.init();
    await Promise.all(parts.map((part) => module.mergeIndex(new URL(part, index).pathname,
                                                            { baseUrl: root.pathname })));
    return module;
  }

  function engine() {
    if (!pagefind) pagefind = load().catch((error) => { pagefind = null; throw error; });
    return pagefind;
  }

  function show(results, query) {
    list.replaceChildren(...results.map((result) => {
      const item = document.createElement("li");
      const heading = document.createElement("h2");
      const link = document.createElement("a");
      link.href = result.url;
      link.textContent = (result.meta && result.meta.title) || result.url;
      heading.append(link);
      const excerpt = document.createElement("p");
      // Pagefind's excerpt is text from our own pages, with the matches in <mark>.
      excerpt.innerHTML = result.excerpt;
      item.append(heading, excerpt);
      return item;
    }));
    const count = results.length;
    status.textContent = count
      ? `${count} post${count === 1 ? "" : "s"} found for “${query}”.`
      : `No post found for “${query}”.`;
  }

  async function search(query) {
    const ticket = ++latest;
    query = query.trim();
    if (!query) {
      list.replaceChildren();
      status.textContent = "";
      return;
    }
    status.textContent = "Searching…";
    try {
      const found = await (await engine()).search(query);
      const results = await Promise.all(found.results.slice(0, 20).map((r) => r.data()));
      if (ticket === latest) show(results, query);
    } catch (error) {
      if (ticket === latest) status.textContent = "The search index could not be loaded.";
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const url = new URL(location.href);
    url.searchParams.set("q", input.value);
    history.replaceState(null, "", url);
    search(input.value);
  });
  let timer = 0;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => search(input.value), 200);
  });
  const initial = new URLSearchParams(location.search).get("q");
  if (initial) {
    input.value = initial;
    search(initial);
  }
})();
