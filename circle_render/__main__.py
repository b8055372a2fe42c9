from circle_render.cli import main

main()
