import vegaEmbed from "https://esm.sh/vega-embed@v7.0.2?deps=vega@6&deps=vega-lite@6.4.1";

// The panels' chart widget (smoothdp_nb.panels.live.PanelChart).  For offline use the import
// above is removed and the rest is bundled with vl-convert's javascript_bundle (which provides
// `vegaEmbed`).
//
// Data channel: the kernel keeps, in the synced trait `_live_rows`, every dataset it replaced
// since the spec was set ({seq, changed, data}).  A view applies *all* of them as soon as its
// Vega view exists, and afterwards only the `changed` ones of each new value.  So an update sent
// while the view is still embedding -- or before the view was even created (Run All: the cell
// after the one displaying the panel) -- is applied when the view is ready, never dropped.
//
// Theme: the chart background is transparent and the "ink" colour of the spec (text, axes) is
// replaced by JupyterLab's --jp-ui-font-color1 when that CSS variable exists (light and dark
// themes alike); the chart is re-embedded when JupyterLab switches theme.

const INK = "#333333";
const SOFT = "#555555";

function themeColours(el) {
    // an element not yet in the page has no inherited CSS variables: read the page's own then
    // (drawing before it is attached gave Vega's default black text on a dark page)
    const css = getComputedStyle(el.isConnected ? el : document.body);
    const ink = css.getPropertyValue("--jp-ui-font-color1").trim();
    const soft = css.getPropertyValue("--jp-ui-font-color2").trim();
    const grid = css.getPropertyValue("--jp-border-color2").trim();
    return ink ? {ink, soft: soft || ink, grid: grid || null} : null;
}

function recolour(node, theme) {
    if (Array.isArray(node)) {
        return node.map((v) => recolour(v, theme));
    }
    if (node !== null && typeof node === "object") {
        const out = {};
        for (const [key, value] of Object.entries(node)) {
            // datasets are data, not styling: leave them alone
            out[key] = key === "datasets" || key === "values" ? value : recolour(value, theme);
        }
        return out;
    }
    if (typeof node === "string") {
        const lower = node.toLowerCase();
        return lower === INK ? theme.ink : lower === SOFT ? theme.soft : node;
    }
    return node;
}

function titleText(title) {
    const text = typeof title === "object" && title !== null && !Array.isArray(title) ? title.text : title;
    return Array.isArray(text) ? text.join(" ") : text ?? "";
}

// Screen readers: the chart is one image described by its title (marks and axes stay out of the
// accessibility tree); the export menu and the panel's slider handles get names.
function describe(spec) {
    const config = Object.assign({}, spec.config ?? {}, {aria: false});
    const description = spec.description ?? (titleText(spec.title) || "chart");
    return Object.assign({}, spec, {config, description});
}

function labelImage(el, description) {
    // one image with a name; what Vega draws inside stays out of the accessibility tree
    const image = el.querySelector("svg.marks, canvas.marks");
    if (image === null) {
        return;
    }
    image.setAttribute("role", "img");
    image.setAttribute("aria-label", description);
    for (const child of image.children) {
        child.setAttribute("aria-hidden", "true");
    }
}

function nameControls(el) {
    const summary = el.querySelector("details > summary");
    if (summary !== null && !summary.hasAttribute("aria-label")) {
        summary.setAttribute("aria-label", "chart menu: save as SVG or PNG, view the source");
    }
    const panel = el.closest(".sdp-panel");
    if (panel === null) {
        return;
    }
    for (const slider of panel.querySelectorAll(".widget-slider")) {
        const label = slider.querySelector(".widget-label");
        const name = label ? label.textContent.trim() : "";
        const handles = slider.querySelectorAll(".noUi-handle");
        handles.forEach((handle, i) => {
            const end = handles.length === 2 ? (i === 0 ? " (lower end)" : " (upper end)") : "";
            handle.setAttribute("aria-label", name + end);
        });
        const readout = slider.querySelector(".widget-readout");
        if (readout !== null) {
            readout.setAttribute("role", "textbox");
            readout.setAttribute("aria-label", name + ": type a value");
        }
    }
}

function themed(spec, el) {
    const theme = themeColours(el);
    spec = describe(spec);
    const config = Object.assign({}, spec.config ?? {});
    config.background = "transparent";
    if (theme === null) {
        return Object.assign({}, spec, {config});
    }
    const text = {labelColor: theme.ink, titleColor: theme.ink};
    config.axis = Object.assign({domainColor: theme.soft, tickColor: theme.soft}, text, config.axis ?? {});
    if (theme.grid) {
        config.axis.gridColor = theme.grid;
    }
    config.legend = Object.assign({}, text, config.legend ?? {});
    config.title = Object.assign({color: theme.ink, subtitleColor: theme.ink}, config.title ?? {});
    config.text = Object.assign({color: theme.ink}, config.text ?? {});
    return recolour(Object.assign({}, spec, {config}), theme);
}

function setRows(view, name, rows) {
    const dataset = view._runtime.data[name];
    if (dataset === undefined) {
        return;
    }
    const changeset = view.changeset().remove(() => true).insert(rows);
    dataset.modified = true;
    view.pulse(dataset.input, changeset);
}

async function render({model, el}) {
    let api = null;
    let finalize = null;
    let generation = 0;
    let description = "chart";

    el.classList.add("sdp-live-chart");

    async function applyRows(all) {
        const live = model.get("_live_rows") ?? {};
        const data = live.data ?? {};
        const names = all ? Object.keys(data) : (live.changed ?? []).filter((n) => n in data);
        if (api === null || names.length === 0) {
            return;
        }
        for (const name of names) {
            setRows(api.view, name, structuredClone(data[name]));
        }
        await api.view.runAsync();
        labelImage(el, description);
        el.dataset.liveSeq = String(live.seq ?? 0);
    }

    async function embed() {
        const mine = ++generation;
        if (finalize !== null) {
            finalize();
            finalize = null;
        }
        api = null;
        el.dataset.liveReady = "false";
        const spec = model.get("spec");
        if (spec == null) {
            el.replaceChildren();
            return;
        }
        const options = structuredClone(model.get("embed_options") ?? {});
        let result;
        const drawn = themed(structuredClone(spec), el);
        description = drawn.description;
        try {
            result = await vegaEmbed(el, drawn, options);
        } catch (error) {
            el.textContent = "JavaScript error while drawing the chart: " + error.message;
            return;
        }
        if (mine !== generation) {  // superseded while embedding
            result.finalize();
            return;
        }
        api = result;
        finalize = result.finalize;
        el.sdpView = result.view;  // for tests and the browser console
        labelImage(el, description);
        nameControls(el);
        // whatever the kernel sent so far, applied now that the view exists
        await applyRows(true);
        el.dataset.liveReady = "true";
    }

    model.on("change:_live_rows", () => applyRows(false));
    model.on("change:spec", embed);
    model.on("change:embed_options", embed);

    // follow JupyterLab's theme switches (the body's data-jp-theme-* attributes)
    const observer = new MutationObserver(() => embed());
    observer.observe(document.body, {attributes: true, attributeFilter: ["data-jp-theme-name", "data-jp-theme-light"]});

    await embed();
    // the slider views may be drawn after the chart (and the chart attached to the page only after
    // it is rendered): name them whenever the panel's elements change
    const namer = new MutationObserver(() => nameControls(el));
    let tries = 0;
    const attach = () => {
        const panel = el.closest(".sdp-panel");
        if (panel === null) {
            if (++tries < 600) {  // not attached yet (or a chart outside a panel: give up after ~10 s)
                requestAnimationFrame(attach);
            }
            return;
        }
        nameControls(el);
        namer.observe(panel, {childList: true, subtree: true});
    };
    attach();
    return () => {
        observer.disconnect();
        namer.disconnect();
        if (finalize !== null) {
            finalize();
        }
    };
}

export default {render};
