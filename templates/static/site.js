/* toolkit's default theme: the theme toggle and the copy buttons of code blocks. No
   framework; the page works without it. */
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

  for (const pre of document.querySelectorAll("main pre")) {
    if (!pre.hasAttribute("tabindex")) pre.tabIndex = 0; // comments' code scrolls too
    if (!navigator.clipboard) continue;
    const block = document.createElement("div");
    block.className = "code-block";
    pre.before(block);
    block.append(pre);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.addEventListener("click", async () => {
      const text = (pre.querySelector("code") || pre).textContent.replace(/\n$/, "");
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
    block.append(button);
  }
})();
