import type { Image } from "../../types";

export function ImageTable({ images }: { images: Image[] }) {
  return (
    <section aria-labelledby="images-title" className="images">
      <h2 id="images-title">Images</h2>
      <table className="data">
        <thead>
          <tr><th scope="col">Repository</th><th scope="col">Tag</th><th scope="col">Pull secret</th>
            <th scope="col">Description</th></tr>
        </thead>
        <tbody>
          {images.map((image) => (
            <tr key={image.id}>
              <td><code>{image.repository}</code></td>
              <td><code>{image.tag}</code></td>
              <td>{image.pull_secret ?? <span className="muted">—</span>}</td>
              <td>{image.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
