import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ResourceTable, type Column, type TableList } from "./ResourceTable";

interface Row {
  id: number;
  name: string;
}

const columns: (Column<Row> | false)[] = [
  { header: "Name", cell: (r) => <strong>{r.name}</strong> },
  false,  // a column this viewer does not get
  { header: "Actions", hiddenHeader: true, className: "row-actions", cell: (r) => <button type="button">Delete {r.name}</button> },
];

function render(list: TableList<Row>): string {
  return renderToStaticMarkup(
    <ResourceTable list={list} columns={columns} rowKey={(r) => r.id} className="thing-table"
      rowAttributes={(r) => ({ "data-thing": r.name, className: r.id === 2 ? "inactive" : undefined })}
      loadingText="Loading things" empty={<>No things yet.</>} noun="things" />,
  );
}

const idle = { error: null, loading: false };

describe("ResourceTable", () => {
  it("says it is loading until the first answer, and nothing else", () => {
    const html = render({ rows: undefined, error: null, loading: true });
    expect(html).toContain("Loading things…");
    expect(html).not.toContain("<table");
    expect(html).not.toContain("No things");
  });

  it("shows a failed first read as an alert, without the loading text", () => {
    const html = render({ rows: undefined, error: new Error("server down"), loading: false });
    expect(html).toMatch(/<div class="error-banner" role="alert">server down<\/div>/);
    expect(html).not.toContain("Loading things");
  });

  it("keeps the last rows under the error of a later read", () => {
    const html = render({ rows: [{ id: 1, name: "a" }], error: new Error("server down"), loading: false });
    expect(html).toContain("server down");
    expect(html).toContain('data-thing="a"');
  });

  it("shows the empty state instead of an empty table", () => {
    const html = render({ rows: [], ...idle });
    expect(html).toContain("No things yet.");
    expect(html).not.toContain("<table");
  });

  it("renders a row per item with its attributes, and hidden headers for screen readers only", () => {
    const html = render({ rows: [{ id: 1, name: "a" }, { id: 2, name: "b" }], ...idle });
    expect(html).toContain('<table class="data thing-table">');
    expect(html).toContain('<th scope="col">Name</th>');
    expect(html).toContain('<th scope="col"><span class="visually-hidden">Actions</span></th>');
    expect(html.match(/<th /g)).toHaveLength(2);
    expect(html).toContain('<tr data-thing="a"><td><strong>a</strong></td><td class="row-actions">');
    expect(html).toContain('<tr data-thing="b" class="inactive">');
    expect(html).not.toContain("Pages");
  });

  it("pages a server-paged list: Previous off on the first page, Next off on the last", () => {
    const paged = { rows: [{ id: 1, name: "a" }], ...idle, count: 60, pages: 3, setPage: () => undefined };
    const first = render({ ...paged, page: 0 });
    expect(first).toContain('<nav class="list-pager" aria-label="Pages">');
    expect(first).toContain("Page 1 of 3 (60 things)");
    expect(first).toMatch(/<button type="button" disabled="">Previous<\/button>/);
    expect(first).toMatch(/<button type="button">Next<\/button>/);
    const last = render({ ...paged, page: 2 });
    expect(last).toMatch(/<button type="button">Previous<\/button>/);
    expect(last).toMatch(/<button type="button" disabled="">Next<\/button>/);
  });

  it("keeps the pager on an emptied later page so one can go back", () => {
    const html = render({ rows: [], ...idle, count: 0, page: 2, pages: 1, setPage: () => undefined });
    expect(html).toContain("No things yet.");
    expect(html).toMatch(/<button type="button">Previous<\/button>/);
  });
});
