"""Publishing: asv's results -> the release report and the offline site, top-down.

results, coverage  asv's results of every machine by release tag; what each one lacks
families  the benchmark families, their grid points and labels
articles  the five articles described once: examples, isolating variants, claims
claims    a claim's answer per release, with the reason for gaps
changes   what changed between adjacent releases (the gate's rules), and the kept gate run
findings, reported  the articles' examples as written; TensorFlow's reported leaks answered
report, headline  the report computed once, as data; its first screen in users' words
sections, blocks, svg  sections built once as blocks (Markdown, HTML, lines); SVG plots
markdown, html  render a Report to Markdown and to an HTML page (they read only the Report)
assets    asv's CDN scripts and styles, vendored for an offline site
site      `tfbench publish`: asv publish, assets, the report written beside the site
asv_publish  asv's `publish` with each git range asked once (its regressions page's cost)
merge     results measured elsewhere merged into this project's, checked, whole or not at all
chain     a release read on another CPU joined to a history by a chain
by_cpu, python_axis  a release pair's time on several CPUs; the newest release on each Python
reasons, explained  why a point has no value (one line); why a release's leaking points leak
filed     the reports filed upstream, as the report lists them
nightly, nightly_graphs  the nightly watch as a page, and as asv's own site (nightly/)
"""
