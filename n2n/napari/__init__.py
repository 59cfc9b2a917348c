"""n2n's napari plugin: Diagnose noise, Train and Denoise widgets and two
samples (napari.yaml, its npe2 manifest; docs/napari.md). A thin layer over
the Python front door: each widget gathers arguments from layers and fields,
calls n2n.diagnose, n2n.train or n2n.Denoiser in a worker thread (running.py)
and shows progress and one-line errors. Needs `pip install n2n[napari]`.
"""
