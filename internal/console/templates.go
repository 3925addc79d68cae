package console

// pageTemplates are the console's pages (html/template escapes every value).
const pageTemplates = `
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.}} · Strata console</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:10px 20px}header a{color:#fff;text-decoration:none;font-weight:600}
main{padding:16px 20px;max-width:1200px}h2{font-size:16px;margin:22px 0 8px}
table{border-collapse:collapse;background:#fff;width:100%;margin-bottom:8px}
th,td{border:1px solid #dde1e8;padding:4px 8px;text-align:left;vertical-align:top}th{background:#eef0f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#6b7280}.err{color:#b42318;font-weight:600}
.plots{display:grid;grid-template-columns:repeat(2,1fr);gap:12px}.plot{background:#fff;border:1px solid #dde1e8;padding:8px}
svg{width:100%;height:120px;background:#fbfcfd}polyline{fill:none;stroke:#2563eb;stroke-width:1.5}
form{background:#fff;border:1px solid #dde1e8;padding:10px}label{display:inline-block;margin:0 12px 6px 0}
input[type=text]{width:260px}.bar{background:#e5e7eb;height:8px;width:120px;display:inline-block}.bar i{background:#16a34a;height:8px;display:block}
</style></head><body><header><a href="/console">Strata console</a></header><main>{{end}}

{{define "foot"}}</main></body></html>{{end}}

{{define "overview"}}{{template "head" "Overview"}}
<p>Version <b>{{.Version}}</b>{{if .Uptime}} · up {{.Uptime}}{{end}}</p>
<h2>Collections</h2>
{{if .Collections}}<table id="collections"><tr><th>database</th><th>collection</th><th>id</th><th>shards</th><th>load state</th><th>rows</th></tr>
{{range .Collections}}<tr><td>{{.DB}}</td><td><a href="/console/collection?db={{.DB}}&amp;name={{.Name}}">{{.Name}}</a></td><td class="num">{{.ID}}</td><td class="num">{{.Shards}}</td><td>{{.LoadState}}</td><td class="num">{{.Rows}}</td></tr>
{{end}}</table>{{else}}<p class="muted">No collections.</p>{{end}}
<h2>Channels</h2>
{{if .Channels}}<table id="channels"><tr><th>vchannel</th><th>checkpoint lag (ms)</th></tr>
{{range .Channels}}<tr><td>{{.Name}}</td><td class="num">{{printf "%.0f" .LagMS}}</td></tr>{{end}}</table>
{{else}}<p class="muted">No channel has been written.</p>{{end}}
<h2>Last hour</h2><div class="plots">
{{range .Plots}}<div class="plot"><b>{{.Title}}</b> <span class="muted">{{.Unit}}{{if .Points}} · now {{.Last}}, max {{.Max}} · {{.From}}–{{.To}} UTC{{end}}</span>
<svg viewBox="0 0 600 120" preserveAspectRatio="none" role="img" aria-label="{{.Title}}">{{if .Points}}<polyline points="{{.Points}}"/>{{end}}</svg>
{{if not .Points}}<span class="muted">Collecting (one point per sample period).</span>{{end}}</div>
{{end}}</div>
{{template "foot"}}{{end}}

{{define "collection"}}{{template "head" .Name}}
<h1 style="font-size:20px">{{.DB}} / {{.Name}}</h1>
<p>id {{.ID}} · {{.LoadState}}{{if eq .LoadState "Loading"}} ({{.LoadProgress}} %){{end}} · {{.Rows}} rows{{if .Description}} · {{.Description}}{{end}}</p>
<h2>Schema</h2><table id="schema"><tr><th>id</th><th>field</th><th>type</th><th>params</th><th>flags</th><th>description</th></tr>
{{range .Fields}}<tr><td class="num">{{.ID}}</td><td>{{.Name}}</td><td>{{.Type}}</td><td>{{.Params}}</td><td>{{.Flags}}</td><td>{{.Desc}}</td></tr>{{end}}</table>
<h2>Indexes</h2>{{if .Indexes}}<table id="indexes"><tr><th>index</th><th>field</th><th>type</th><th>metric</th><th>state</th><th>indexed / total rows</th><th>pending</th></tr>
{{range .Indexes}}<tr><td>{{.Name}}</td><td>{{.Field}}</td><td>{{.Type}}</td><td>{{.Metric}}</td><td>{{.State}}{{if .Reason}} <span class="err">{{.Reason}}</span>{{end}}</td>
<td><span class="bar"><i style="width:{{pct .Indexed .Total}}%"></i></span> {{.Indexed}} / {{.Total}}</td><td class="num">{{.Pending}}</td></tr>{{end}}</table>
{{else}}<p class="muted">No index.</p>{{end}}
<h2>Segments</h2>{{if .Segments}}<table id="segments"><tr><th>segment</th><th>partition</th><th>state</th><th>level</th><th>rows</th><th>sorted</th><th>served</th></tr>
{{range .Segments}}<tr><td class="num">{{.ID}}</td><td class="num">{{.Partition}}</td><td>{{.State}}</td><td>{{.Level}}</td><td class="num">{{.Rows}}</td><td>{{.Sorted}}</td><td>{{.Served}}</td></tr>{{end}}</table>
{{else}}<p class="muted">No segment yet.</p>{{end}}
<p class="muted">vchannels: {{range .VChannels}}{{.}} {{end}}</p>
<h2>Playground</h2>
<form method="get" action="/console/collection">
<input type="hidden" name="db" value="{{.DB}}"><input type="hidden" name="name" value="{{.Name}}"><input type="hidden" name="run" value="1">
<label><input type="radio" name="mode" value="query"{{if eq .Play.Mode "query"}} checked{{end}}> query</label>
<label><input type="radio" name="mode" value="search"{{if eq .Play.Mode "search"}} checked{{end}}> search</label><br>
<label>filter <input type="text" name="filter" value="{{.Play.Filter}}"></label>
<label>output fields <input type="text" name="output" value="{{.Play.Output}}" placeholder="a, b"></label>
<label>limit <input type="number" name="limit" value="{{.Play.Limit}}" min="1" max="16384"></label><br>
<label>search vector <input type="text" name="vector" value="{{.Play.Vector}}" placeholder="[0.1, 0.2, …]"></label>
<label>anns field <input type="text" name="anns" value="{{.Play.Anns}}"></label>
<button type="submit">Run</button></form>
{{if .Play.Ran}}{{if .Play.Err}}<p class="err" id="play-error">{{.Play.Err}}</p>{{else}}
<p>{{len .Play.Rows}} rows</p><table id="results"><tr>{{range .Play.Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Play.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}{{end}}
{{template "foot"}}{{end}}

{{define "error"}}{{template "head" "Error"}}<p class="err">{{.Err}}</p>{{template "foot"}}{{end}}
`
