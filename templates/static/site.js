/* toolkit's default theme: the theme toggle, the bar of code blocks (language, copy),
   the folded contents on a phone, embeds loaded on a click, "/" for search. No framework;
   the page works without it. */
(() => {
  "use strict";
  const root = document.documentElement;
  const KEY = "toolkit-theme";
  const system = matchMedia("(prefers-color-scheme: dark)");
  const theme = () => root.dataset.theme || (system.matches ? "dark" : "light");

  const toggle = document.querySelector(".theme-toggle");
  if (toggle) {
    const show = () => toggle.setAttribute("aria-pressed", String(theme() === "dark"));
    toggle.addEventListener("click", () => {
      root.dataset.theme = theme() === "dark" ? "light" : "dark";
      try {
        localStorage.setItem(KEY, root.dataset.theme);
      } catch (error) { /* storage refused: the choice lasts for this page */ }
      show();
    });
    system.addEventListener("change", show);
    show();
    toggle.hidden = false;
  }

  // A status line that screen readers announce ("Copied").
  let status = null;
  const announce = (text) => {
    if (!status) {
      status = document.createElement("p");
      status.className = "visually-hidden";
      status.setAttribute("role", "status");
      document.body.append(status);
    }
    status.textContent = text;
  };

  // Code blocks: a bar above each, with the language's name and the copy button, so the
  // button never covers the code.
  for (const pre of document.querySelectorAll("main pre")) {
    if (!pre.hasAttribute("tabindex")) pre.tabIndex = 0; // comments' code scrolls too
    const code = pre.querySelector("code");
    const language = code && /(?:^|\s)language-(\S+)/.exec(code.className);
    if (!language && !navigator.clipboard) continue;
    const block = document.createElement("div");
    block.className = "code-block";
    const bar = document.createElement("div");
    bar.className = "code-bar";
    const name = document.createElement("span");
    name.className = "code-language";
    name.textContent = language ? language[1] : "";
    bar.append(name);
    pre.before(block);
    block.append(bar, pre);
    if (!navigator.clipboard) continue;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.addEventListener("click", async () => {
      const text = (code || pre).textContent.replace(/\n$/, "");
      let done = "Copied";
      try {
        await navigator.clipboard.writeText(text);
      } catch (error) {
        done = "Copy failed";
      }
      button.textContent = done;
      announce(done === "Copied" ? "Code copied to the clipboard" : done);
      setTimeout(() => { button.textContent = "Copy"; }, 2000);
    });
    bar.append(button);
  }

  // The contents and a series' parts start folded (a phone's first screen shows the
  // post); a wide screen has room for them.
  if (matchMedia("(min-width: 48rem)").matches) {
    for (const box of document.querySelectorAll("details.toc, details.series-parts")) {
      box.open = true;
    }
  }

  // Embeds (dev.to's Liquid tags): nothing is loaded from the service until the reader
  // asks, and only from the services the site knows.
  const FRAMES = ["https://www.youtube-nocookie.com/embed/", "https://player.vimeo.com/video/",
    "https://codepen.io/", "https://codesandbox.io/embed/", "https://stackblitz.com/edit/",
    "https://jsfiddle.net/"];
  for (const box of document.querySelectorAll(".embed-frame[data-frame]")) {
    const source = box.dataset.frame;
    if (!FRAMES.some((prefix) => source.startsWith(prefix))) continue;
    const link = box.querySelector("a");
    const what = link ? link.textContent : "the embed";
    const service = box.querySelector(".embed-service");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "embed-load";
    button.textContent = `Load ${what} here`;
    if (service) button.title = `Connects to ${service.textContent}`;
    button.addEventListener("click", () => {
      const frame = document.createElement("iframe");
      frame.src = source;
      frame.title = what;
      frame.setAttribute("allow", "fullscreen; picture-in-picture; encrypted-media");
      frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-popups allow-presentation allow-forms");
      frame.referrerPolicy = "strict-origin-when-cross-origin";
      button.replaceWith(frame);
    });
    box.append(button);
  }

  // "/" goes to the search: its box on the search page, else the search page.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && (target.isContentEditable
        || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    const box = document.getElementById("search-query");
    const link = document.querySelector(".site-header .search-link");
    if (!box && !link) return;
    event.preventDefault();
    if (box) box.focus();
    else location.href = `${link.href}#search-query`;
  });
  if (location.hash === "#search-query") {
    const box = document.getElementById("search-query");
    if (box) box.focus();
  }
})();
