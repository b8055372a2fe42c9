"""A complete renderer for `render check`, in plain NumPy: circle by circle, in order.

    render check -r examples/my_renderer.py:MyRenderer --size 256

Start from this to write your own (faster) one; circle_render/interface.py documents the interface.
"""
import numpy as np

from circle_render.cpu.animation import advance
from circle_render.cpu.shading import circle_bounds, clear_rows, pixel_centres, snow_alpha_color


class MyRenderer:
    name = "my-renderer"

    def load(self, scene, width, height):
        self.scene, self.width, self.height = scene.copy(), width, height
        self.image = np.empty((height, width, 4), dtype=np.float32)

    def clear(self):                       # white, or the snow scenes' vertical gradient
        self.image[:] = clear_rows(self.height, self.scene.shading)[:, None, :]

    def advance(self):                     # one animation step (nothing for still scenes)
        advance(self.scene)

    def render(self):
        s = self.scene
        cx, cy = pixel_centres(self.width), pixel_centres(self.height)
        x0, x1, y0, y1 = circle_bounds(s.position, s.radius, self.width, self.height)
        for i in range(s.n):               # index order: circle 0 is drawn first
            box = self.image[y0[i]:y1[i], x0[i]:x1[i]]
            dx = s.position[i, 0] - cx[x0[i]:x1[i]]
            dy = s.position[i, 1] - cy[y0[i]:y1[i]]
            d2 = (dy * dy)[:, None] + (dx * dx)[None, :]
            inside = d2 <= s.radius[i] * s.radius[i]
            if s.shading == "snow":
                alpha, rgb = snow_alpha_color(d2, s.radius[i], s.position[i, 2])
                rgb = np.stack(rgb, axis=-1)
            else:
                alpha, rgb = np.float32(0.5), s.color[i]
            alpha = np.broadcast_to(alpha, d2.shape)[..., None]
            blended = alpha * rgb + (np.float32(1) - alpha) * box[..., :3]
            box[..., :3] = np.where(inside[..., None], blended, box[..., :3])
            box[..., 3] += np.where(inside, alpha[..., 0], np.float32(0))

    def synchronize(self):                 # nothing queued on a device
        pass

    def get_image(self):                   # (height, width, 4) float32, row 0 at the bottom
        return self.image
